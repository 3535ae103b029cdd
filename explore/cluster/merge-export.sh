#!/usr/bin/env bash
# explore/cluster/merge-export.sh — after explore-array.sbatch's tasks: merge
# the shards into one exploration and export its best into a results
# folder (on a machine with the device the shards ran on: export measures
# the best again). Submit it after the array, e.g.
#   sbatch --dependency=afterany:JOBID --gres=gpu:1 --wrap 'OUT=… explore/cluster/merge-export.sh'
# In the environment: OUT (the shards' folder, as for the array),
# RESULTS (default results), STRATA (default strata on the PATH).
set -euo pipefail
: "${OUT:?OUT is the folder of the shards}"
STRATA=${STRATA:-strata}
shards=("$OUT"/shard-*)
[ -d "${shards[0]}" ] || { echo "merge-export: no shard under $OUT" >&2; exit 1; }
"$STRATA" merge "${shards[@]}" --out "$OUT/merged"
"$STRATA" export "$OUT/merged" --into "${RESULTS:-results}" ${STRATA_CACHE:+--cache "$STRATA_CACHE"}
