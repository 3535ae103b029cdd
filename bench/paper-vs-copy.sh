#!/usr/bin/env bash
# bench/paper-vs-copy.sh — the best point of [Pizzuti et al. 2022]'s space
# beside a copy of the same bytes, in one run on one device, for the f32
# and the i32 prefix sum (examples/prefix_sum.strata, prefix_sum_i32.strata).
#
#   bench/paper-vs-copy.sh [N] [ROUNDS]
#     N       the prefix sums' length (default 16777216 = 2^24)
#     ROUNDS  rounds of the timings (default 3)
#   SPACE='…' explores another space (default the paper's 25 points,
#   parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])), DEVICE=D picks
#   the OpenCL device, WORK=DIR puts everything elsewhere (default
#   out/bench-paper).
#
# For each program `strata explore` finds the best point of SPACE (every
# point checked against the interpreter) and --emit counts its kernels. Then,
# ROUNDS times in turn, so that the machine's drift touches all alike, each
# best variant and a copy kernel of the same bytes (`xs |> map(x => x)`,
# out[i] = in[i], of the same element type) by `strata run --time` (median of
# TIMED_RUNS kernel timings). The table gives each one's median over the
# rounds, its throughput (bytes read and written by the program) and the
# ratio the issue asks for: the scan's throughput over the copy's. A
# scan-then-propagate scan reads and writes every element twice (4N), so
# 0.5 is its limit.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-16777216}
ROUNDS=${2:-3}
SPACE=${SPACE:-'parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])'}
WORK=${WORK:-out/bench-paper}
. bench/common.sh
rm -rf "$WORK"
mkdir -p "$WORK"

names=(f32 i32)
progs=(examples/prefix_sum.strata examples/prefix_sum_i32.strata)
best=()
kernels=()
for k in 0 1; do
    t=${names[$k]}
    copy_program "$t" "$WORK/copy_$t.strata"
    echo "explore $t: $SPACE, N=$N" >&2
    $STRATA explore "${progs[$k]}" --size "N=$N" --space "$SPACE" --out "$WORK/explored_$t" \
        --cache "$WORK/cache" "${device[@]}" >"$WORK/explore_$t.log" 2>&1
    b=$(best_of "$WORK/explored_$t" | cut -f2)
    [ -n "$b" ] || { echo "no variant of the space ran for $t; see $WORK/explore_$t.log" >&2; exit 1; }
    echo "best $t: $b" >&2
    best+=("$b")
    "$STRATA" run "${progs[$k]}" -s "$b" --size "N=$N" --emit "$WORK/emit_$t" "${device[@]}" >/dev/null 2>&1
    kernels+=("$(grep -c '__kernel' "$WORK/emit_$t/kernels.cl")")
done

for t in "${names[@]}"; do : >"$WORK/scan_$t.ms"; : >"$WORK/copy_$t.ms"; done
for r in $(seq 1 "$ROUNDS"); do
    echo "round $r of $ROUNDS" >&2
    for k in 0 1; do
        t=${names[$k]}
        strata_ms "${progs[$k]}" -s "${best[$k]}" --size "N=$N" >>"$WORK/scan_$t.ms"
        strata_ms "$WORK/copy_$t.strata" --size "N=$N" >>"$WORK/copy_$t.ms"
    done
done
device_name=$(device_name_of "$WORK/copy_i32.strata" --size N=1)

{
    printf 'the best of %s against a copy, %d elements on %s, medians of %d rounds\n\n' "$SPACE" "$N" "$device_name" "$ROUNDS"
    printf '| %-4s | %-40s | %7s | %10s | %8s | %10s | %8s | %10s |\n' type "best point" kernels "scan ms" "GB/s" "copy ms" "GB/s" "scan/copy"
    printf '|------|------------------------------------------|---------|------------|----------|------------|----------|------------|\n'
    for k in 0 1; do
        t=${names[$k]}
        scan=$(median <"$WORK/scan_$t.ms"); copy=$(median <"$WORK/copy_$t.ms")
        awk -v t="$t" -v b="${best[$k]}" -v k="${kernels[$k]}" -v n="$N" -v scan="$scan" -v copy="$copy" 'BEGIN {
            bytes = 8 * n  # four bytes read and four written per element
            printf "| %-4s | %-40s | %7d | %10.3f | %8.2f | %10.3f | %8.2f | %10.3f |\n",
                t, b, k, scan, bytes / scan / 1e6, copy, bytes / copy / 1e6, copy / scan
        }'
    done
} | tee "$WORK/table.md"
