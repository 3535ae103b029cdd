/* explore/claim.c — an exploration's folder as the writers of its records
 * (explore, --serve, merge) claim it: locked for one process, holding one
 * exploration; and the paths of its files. Apart from workdir.c because
 * merge needs it, and the record readers' fuzzers link merge.c without the
 * device's code. */
#include "workdir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void workdir_path(const char *dir, const char *name, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s", dir, name);
}

bool workdir_lock(const char *dir, st_lock *lock, st_err *err) {
    char path[4200];
    workdir_path(dir, "explore.lock", path, sizeof path);
    st_err why;
    /* a folder another strata works in is named as the folder; a lock
     * that cannot be taken for another reason (a FIFO there), as itself */
    if (!st_lock_take(lock, path, false, &why))
        return strncmp(why.message, "in use by another strata", 24) ? (*err = why, false)
                                                                    : st_fail(err, (st_loc){dir, 0, 0}, "%s", why.message);
    /* what writers killed before their rename left: theirs only, as every
     * writer of these files holds this lock */
    static const char *const kept[] = {"explore.json", "program.strata", "results.jsonl", "results.csv", "results.svg",
                                         "serve-evaluating"};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        workdir_path(dir, kept[i], path, sizeof path);
        st_remove_leftovers(path);
    }
    return true;
}

bool workdir_holds(const char *dir, const char *meta, bool *held, st_err *err) {
    char path[4200];
    workdir_path(dir, "explore.json", path, sizeof path);
    size_t len;
    bool absent;
    char *old = st_read_file_if_any(path, ST_FILE_MAX, "a file", &len, &absent, err);
    *held = old != NULL;
    if (!old) return absent; /* absent: a new exploration */
    st_arena *a = st_arena_new();
    st_err why = {0};
    const st_json *was = a ? st_json_parse(a, path, old, len, &why) : NULL;
    const st_json *now = a ? st_json_parse(a, path, meta, strlen(meta), &why) : NULL;
    char diff[600];
    bool same = was && now && explorations_agree(was, now, diff, sizeof diff);
    if (!was || !now)
        st_fail(err, (st_loc){dir, 0, 0}, "explore.json is not an exploration's description: %s", why.message);
    else if (!same)
        st_fail(err, (st_loc){dir, 0, 0},
                "the directory holds another exploration (%s); give another --out, or remove it", diff);
    st_arena_free(a);
    free(old);
    return same;
}
