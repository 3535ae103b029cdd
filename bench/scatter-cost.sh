#!/usr/bin/env bash
# bench/scatter-cost.sh — what a scatter's last write in index order costs
# (issue 46, item 7): the same programs timed by two builds of strata side
# by side, in turn within each round, so that the machine's drift touches
# both alike. A user's scatter claims each place for its last writer in a
# pass of its own before it writes (codegen/cg_winners.c); a filter's and
# a partition's (scatterDistinct) do not, and are here as controls:
#   - the issue's program, 2^24 elements into 4 places (many writers a place);
#   - a reversal, scatter(replicate(N, 0), iota(N) |> map(i => N - 1 - i), xs):
#     a permutation, one kernel before;
#   - examples/filter.strata and examples/exscan_scatter.strata: compactions
#     written by hand, fused into a look-back scan;
#   - examples/radix_sort.strata and radix_sort_kv.strata: 32 turns of a
#     hand-written split, a permutation each;
#   - controls: examples/filter_keep.strata (filter) and
#     examples/radix_sort_partition.strata (a loop of partitions).
#
#   BEFORE=PATH bench/scatter-cost.sh [ROUNDS]
#     BEFORE     the other strata (a build of the commit before, say)
#     ROUNDS     rounds (default 3)
#   In the environment: N (default 2^24), TIMED_RUNS (15) and SORT_RUNS (3)
#   runs per median, DEVICE, STRATA (this build: build/strata), WORK
#   (default out/bench-scatter-cost).
# The table: the medians over the rounds of each build's `strata run --time`
# median, under the default strategy for the device, and after / before.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
N=${N:-16777216}
SORT_RUNS=${SORT_RUNS:-3}
WORK=${WORK:-out/bench-scatter-cost}
: "${BEFORE:?set BEFORE=PATH, the strata to compare this one with}"
. bench/common.sh
AFTER=$STRATA
rm -rf "$WORK"
mkdir -p "$WORK"

random_npy '<i4' "$N" "$WORK/i32.npy"
random_npy '<u4' "$N" "$WORK/u32.npy"
random_npy '<i4' "$N" "$WORK/values.npy"
printf 'def main(xs: [N]i32): [4]i64 =\n  scatter(replicate(4, -1i64), map(x => i64(x) & 3, xs), iota(N))\n' >"$WORK/repeated.strata"
printf 'def main(xs: [N]i32): [N]i32 =\n  scatter(replicate(N, 0), iota(N) |> map(i => N - 1 - i), xs)\n' >"$WORK/reversal.strata"

# name<TAB>program<TAB>runs<TAB>inputs
cases=("repeated (the issue's)	$WORK/repeated.strata	15	xs=$WORK/i32.npy"
    "reversal	$WORK/reversal.strata	15	xs=$WORK/i32.npy"
    "semifilter	examples/filter.strata	15	xs=$WORK/i32.npy"
    "compaction+count	examples/exscan_scatter.strata	15	xs=$WORK/i32.npy"
    "filter (control)	examples/filter_keep.strata	15	xs=$WORK/i32.npy"
    "radix sort	examples/radix_sort.strata	$SORT_RUNS	xs=$WORK/u32.npy"
    "radix sort kv	examples/radix_sort_kv.strata	$SORT_RUNS	xs=$WORK/u32.npy ys=$WORK/values.npy"
    "partition sort (control)	examples/radix_sort_partition.strata	$SORT_RUNS	xs=$WORK/u32.npy")

for r in $(seq 1 "$ROUNDS"); do
    echo "round $r of $ROUNDS" >&2
    for i in "${!cases[@]}"; do
        IFS=$'\t' read -r name prog runs inputs <<<"${cases[$i]}"
        args=()
        for x in $inputs; do args+=(--input "$x"); done
        for which in before after; do
            bin=$BEFORE
            [ $which = after ] && bin=$AFTER
            STRATA=$bin TIMED_RUNS=$runs strata_ms "$prog" "${args[@]}" >>"$WORK/$i.$which.ms"
        done
    done
done

{
    echo "a scatter's last write in index order, before and after, on $(device_name_of "$WORK/reversal.strata" --size N=1)"
    echo "N = $N, medians of $ROUNDS rounds (ms); strata: the default strategy"
    echo
    printf '| %-26s | %-40s | %10s | %10s | %8s |\n' program file before after after/before
    echo "|----------------------------|------------------------------------------|------------|------------|----------|"
    for i in "${!cases[@]}"; do
        IFS=$'\t' read -r name prog runs inputs <<<"${cases[$i]}"
        b=$(median <"$WORK/$i.before.ms") a=$(median <"$WORK/$i.after.ms")
        awk -v name="$name" -v prog="$prog" -v b="$b" -v a="$a" 'BEGIN {
            printf "| %-26s | %-40s | %10s | %10s | %8s |\n", name, prog, b, a,
                (b == "n/a" || a == "n/a" || b == 0) ? "n/a" : sprintf("%.2f", a / b) }'
    done
} | tee "$WORK/table.md"
