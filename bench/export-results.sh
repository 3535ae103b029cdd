#!/usr/bin/env bash
# bench/export-results.sh — explore and export into results/ the variants
# results/README.md lists for a device: the i32 and f32 prefix sums, a
# histogram and a filter, each over a space shaped for the device's type
# (a CPU: one work-item owning a chunk; a GPU: work-groups through local
# memory). strata run without -s then finds them by device name, vendor or
# type.
#
#   bench/export-results.sh [N]
#     N  the programs' length (default 16777216 = 2^24)
#   In the environment: DEVICE=D (as --device takes it), RESULTS=DIR (default
#   results), WORK=DIR (default out/export-results).
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-16777216}
RESULTS=${RESULTS:-results}
WORK=${WORK:-out/export-results}
. bench/common.sh
mkdir -p "$WORK" "$RESULTS"

# the device's type, as strata run's default strategy reads it
type=$("$STRATA" run examples/prefix_sum.strata --size N=1 --results "$WORK/none" "${device[@]}" 2>&1 |
       sed -n 's/.*(the default for a \([A-Z]*\):.*/\1/p')
# the histogram's: on a CPU the heuristic's C (left out) in either memory,
# since its groups of one work-item beat any C given there
if [ "$type" = CPU ]; then
    scan_space='lookback(M=[4096, 8192, 16384, 32768, 65536], WG=1, LOAD=direct)'
    hist_space='subhistogram(MEM=[global, local], ATOMIC=[add])'
else
    scan_space='lookback(M=[8, 12, 16, 24], WG=[128, 256, 512], LW=32)'
    hist_space='subhistogram(C=[1, 16, 256, 1024], MEM=[global, local], ATOMIC=[add])'
fi
fuse='try(each(any, try(fuse-map-scan))) ; try(each(any, try(fuse-scan-map))) ; try(each(any, try(fuse-scan-scatter)))'
echo "device type: $type" >&2

# explore NAME PROGRAM SPACE ARGS…: one exploration, exported
explore() {
    local name=$1 prog=$2 space=$3
    shift 3
    echo "== $name: $space" >&2
    rm -rf "$WORK/$name"
    "$STRATA" explore "$prog" --space "$space" --out "$WORK/$name" --cache "$WORK/cache" "${device[@]}" "$@" \
        >"$WORK/$name.log" 2>&1 || { echo "explore of $name failed: see $WORK/$name.log" >&2; return 0; }
    "$STRATA" export "$WORK/$name" --into "$RESULTS" --cache "$WORK/cache" 2>&1 | grep -E '^best|^ +median|^kernels' >&2 ||
        echo "export of $name failed" >&2
}

explore prefix_sum_i32 examples/prefix_sum_i32.strata "$scan_space" --size "N=$N"
explore prefix_sum examples/prefix_sum.strata "$scan_space" --size "N=$N"
explore filter examples/filter.strata "$fuse ; first(top scan, $scan_space)" --size "N=$N"
explore histogram examples/histogram.strata "$hist_space" --size "N=$N" --input H=256
