/* explore/index.h — adding an export to results/index.json (internal to
 * explore/; reading it is st_results_lookup in explore.h). */
#ifndef STRATA_EXPLORE_INDEX_H
#define STRATA_EXPLORE_INDEX_H

#include "explore.h"

/* Add (or replace) the export of `program` on `dev`, at `path` relative to
 * `into`, and derive the vendor and default sections again. */
bool index_add(const char *into, const st_device_info *dev, const char *program, const char *strategy,
               const char *path, double median_ms, double gb_per_s, st_err *err);

#endif
