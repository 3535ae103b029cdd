#!/usr/bin/env bash
# bench/pad-scan.sh — what padding costs a scan of a mapped input, in one
# run on one device: parallel-scan(BS=256, BF=2, SE=4) on
# `xs |> map(f) |> scan(+, 0)` at a length BS does not divide (2^24 + 1, so
# pad-scan pads it), beside the same scan of a let-bound map at a length BS
# divides (2^24, stated by `where N % 256 == 0`, so nothing is padded).
#
#   bench/pad-scan.sh [N] [ROUNDS]
#     N       the unpadded length (default 16777216 = 2^24); the padded
#             program runs at N + 1
#     ROUNDS  rounds of the two timings (default 3)
#   DEVICE=D in the environment picks the OpenCL device, WORK=DIR puts
#   everything elsewhere (default out/bench-pad-scan).
#
# Each program is run once with --check (its result equals the
# interpreter's) and --emit (its kernels counted in kernels.cl); then,
# ROUNDS times in turn, so that the machine's drift touches both alike,
# `strata run --time` (median of 15 kernel timings) of each. The table gives
# each one's kernels and median over the rounds, and the ratio of the
# padded program's time to the unpadded one's: padding is a view read where
# the scan reads it, and keeping the first N elements is the scan's last
# step (index fusion), so the padded program should launch no more kernels
# than the unpadded one (whose let-bound map is a kernel of its own) and
# take about its time.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-16777216}
ROUNDS=${2:-3}
WORK=${WORK:-out/bench-pad-scan}
STRATEGY='parallel-scan(BS=256, BF=2, SE=4)'
. bench/common.sh
rm -rf "$WORK"
mkdir -p "$WORK"
printf 'def main(xs: [N]i32): [N]i32 =\n  xs |> map(x => x * 3 - 1) |> scan(+, 0)\n' >"$WORK/padded.strata"
printf 'def main(xs: [N]i32): [N]i32 where N %% 256 == 0 =\n  let ys = xs |> map(x => x * 3 - 1)\n  in ys |> scan(+, 0)\n' \
    >"$WORK/whole.strata"
padded_n=$((N + 1))

# kernels in the program's kernels.cl, after a checked run
kernels_of() {
    local prog=$1 strategy=$2 n=$3 emit=$4
    "$STRATA" run "$prog" -s "$strategy" --size "N=$n" --check --emit "$emit" "${device[@]}" >"$emit.log" 2>&1 ||
        { echo "$prog at N=$n failed; see $emit.log" >&2; exit 1; }
    grep -q '^check: the results equal' "$emit.log" || { echo "$prog at N=$n: wrong result; see $emit.log" >&2; exit 1; }
    grep -c '__kernel' "$emit/kernels.cl"
}
echo "check and count kernels" >&2
padded_kernels=$(kernels_of "$WORK/padded.strata" "$STRATEGY" "$padded_n" "$WORK/padded")
whole_kernels=$(kernels_of "$WORK/whole.strata" "first(scan, $STRATEGY)" "$N" "$WORK/whole")

: >"$WORK/padded.ms"; : >"$WORK/whole.ms"
for r in $(seq 1 "$ROUNDS"); do
    echo "round $r of $ROUNDS" >&2
    strata_ms "$WORK/padded.strata" -s "$STRATEGY" --size "N=$padded_n" >>"$WORK/padded.ms"
    strata_ms "$WORK/whole.strata" -s "first(scan, $STRATEGY)" --size "N=$N" >>"$WORK/whole.ms"
done
padded=$(median <"$WORK/padded.ms"); whole=$(median <"$WORK/whole.ms")
device_name=$(device_name_of "$WORK/whole.strata" --size N=256)

awk -v n="$N" -v pn="$padded_n" -v padded="$padded" -v whole="$whole" -v pk="$padded_kernels" -v wk="$whole_kernels" \
    -v s="$STRATEGY" -v dev="$device_name" 'BEGIN {
    printf "%s on xs |> map(f) |> scan(+, 0), i32, on %s, medians of the rounds\n\n", s, dev
    printf "| %-46s | %9s | %7s | %10s |\n", "", "N", "kernels", "ms"
    printf "|%s|%s|%s|%s|\n", "------------------------------------------------", "-----------", "---------", "------------"
    printf "| %-46s | %9d | %7d | %10.3f |\n", "padded: the map in the pipeline", pn, pk, padded
    printf "| %-46s | %9d | %7d | %10.3f |\n", "unpadded: the map let-bound, N % 256 == 0", n, wk, whole
    printf "\nkernels: %d padded, %d unpadded\n", pk, wk
    printf "time padded / time unpadded: %.3f\n", padded / whole
}' | tee "$WORK/table.md"
