/* explore/workdir.h — an exploration's directory, shared by the driver
 * (every point of a space) and the session (points on request, for the
 * autotuner): explore.json and program.strata claimed, results.jsonl read
 * and appended to, results.csv and results.svg written at the end.
 * Internal to explore/. */
#ifndef STRATA_EXPLORE_WORKDIR_H
#define STRATA_EXPLORE_WORKDIR_H

#include "variant.h"

#include <stdio.h>


typedef struct workdir {
    const char *dir;
    char records[4200]; /* DIR/results.jsonl */
    int journal;        /* it, open for appending (O_APPEND), or -1 */
    st_lock lock;       /* DIR/explore.lock, held while the exploration runs */
    st_records done;    /* what it held when opened, sorted by point */
} workdir;

/* Make dir, lock it (a second strata exploring into it is refused, naming
 * the first), claim it for this exploration (or check that it holds this
 * very one already: program, entry, space, inputs, seed, device, plugins),
 * cut a last record left unfinished, read the records and open them for
 * appending. */
bool workdir_open(workdir *w, const st_explore_setup *s, const st_space *space, const st_device_info *dev,
                  const char *dir, uint32_t shard, uint32_t nshards, st_err *err);
/* Append one record, a whole line in one write(), synced: a point recorded
 * is a point not redone, and a reader never sees part of one. */
bool workdir_append(workdir *w, const st_record *r, st_err *err);
/* Close the journal and write the reports over every record in dir:
 * results.csv, results.svg; the counts and the best into *sum. Unlocks dir. */
bool workdir_close(workdir *w, const st_explore_setup *s, const st_space *space, st_explore_summary *sum,
                   st_err *err);
/* Free what is left after a failure (workdir_close does it otherwise). */
void workdir_free(workdir *w);

/* DIR/NAME into out (cap bytes). */
void workdir_path(const char *dir, const char *name, char *out, size_t cap);
/* Lock dir (DIR/explore.lock) for this process alone: what writes an
 * exploration's records (explore, merge) takes it first; a second one is
 * refused with the holder's pid and command. */
bool workdir_lock(const char *dir, st_lock *lock, st_err *err);
/* Does dir hold no exploration (*held false), or the one meta (an
 * explore.json's text) describes (*held true)? Another one is refused with
 * where the two differ. */
bool workdir_holds(const char *dir, const char *meta, bool *held, st_err *err);

/* A space whose strategy text is not well-formed fails every point alike:
 * found out from its first point, before the directory is claimed, so that
 * the corrected command can use the same --out. */
bool space_well_formed(const st_explore_setup *s, const st_space *space, st_err *err);

/* The record of v, its dimension values taken from which[]. */
bool record_of(const st_space *space, const variant *v, const uint32_t *which, st_record *r);

#endif
