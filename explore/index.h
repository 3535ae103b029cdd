/* explore/index.h — adding an export to results/index.json (internal to
 * explore/; reading it is st_results_lookup in explore.h). */
#ifndef STRATA_EXPLORE_INDEX_H
#define STRATA_EXPLORE_INDEX_H

#include "explore.h"

/* The lock every writer of into's index and exported folders holds
 * (INTO/.index.lock): taken, waiting for another holder to finish. */
bool index_lock(const char *into, st_lock *lock, st_err *err);
/* Add (or replace) the export of `program` on `dev`, at `path` relative to
 * `into`, and derive the vendor and default sections again, under
 * index_lock (the caller holds it). */
bool index_add(const char *into, const st_device_info *dev, const char *program, const char *strategy,
               const char *path, double median_ms, double gb_per_s, st_err *err);

#endif
