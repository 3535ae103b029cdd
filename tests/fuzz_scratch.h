/* tests/fuzz_scratch.h — a scratch folder for the libFuzzer targets whose
 * readers take a path (results.jsonl, explore.json, index.json): each input
 * is written to a file in it and read back through the real reader. */
#ifndef STRATA_TESTS_FUZZ_SCRATCH_H
#define STRATA_TESTS_FUZZ_SCRATCH_H

#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libFuzzer calls its target over and over in one process, so the folder
 * is a static made once (a fuzzer, not the library: nothing else shares it). */
static char fuzz_scratch_dir[256];

static void fuzz_scratch_remove(void) {
    char cmd[320];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_scratch_dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", fuzz_scratch_dir);
}

/* The folder, made on the first call and removed at exit. */
static const char *fuzz_scratch(void) {
    if (!fuzz_scratch_dir[0]) {
        /* under the folder fuzz-smoke.sh gives (and removes, even after a
         * crash), else in memory where there is a tmpfs: on ext4 a file
         * rewritten by truncation is flushed when closed, a hundred times
         * slower */
        const char *root = getenv("STRATA_FUZZ_SCRATCH");
        if (!root || !root[0]) root = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
        if (!root || !root[0]) root = "/tmp";
        if (strlen(root) + sizeof "/strata-fuzz-XXXXXX" > sizeof fuzz_scratch_dir || strchr(root, '\'')) {
            fprintf(stderr, "the scratch folder's name is too long or holds a quote: %s\n", root);
            abort();
        }
        snprintf(fuzz_scratch_dir, sizeof fuzz_scratch_dir, "%s/strata-fuzz-XXXXXX", root);
        if (!mkdtemp(fuzz_scratch_dir)) {
            perror("mkdtemp");
            abort();
        }
        atexit(fuzz_scratch_remove);
    }
    return fuzz_scratch_dir;
}

/* SCRATCH/name holding the bytes; its path in out. */
static void fuzz_scratch_write(const char *name, const uint8_t *data, size_t size, char *out, size_t cap) {
    snprintf(out, cap, "%s/%s", fuzz_scratch(), name);
    st_err err = {0};
    if (!st_write_file(out, (const char *)data, size, &err)) {
        fprintf(stderr, "%s\n", err.message);
        abort();
    }
}

#endif
