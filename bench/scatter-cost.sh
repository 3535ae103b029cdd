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
#   - the reversal written with scatterDistinct (after; before, scatter);
#   - examples/filter.strata and examples/exscan_scatter.strata: compactions
#     written by hand, fused into a look-back scan (scatterDistinct now);
#   - examples/radix_sort.strata and radix_sort_kv.strata: 32 turns of a
#     hand-written split, a permutation each (scatterDistinct now);
#   - controls: examples/filter_keep.strata (filter) and
#     examples/radix_sort_partition.strata (a loop of partitions).
#
#   BEFORE=PATH bench/scatter-cost.sh [ROUNDS]
#     BEFORE     the other strata (a build of the commit before, say); it
#                runs its own tree's examples (BEFORE_EXAMPLES, by default
#                PATH/../../examples)
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
printf 'def main(xs: [N]i32): [N]i32 =\n  scatterDistinct(replicate(N, 0), iota(N) |> map(i => N - 1 - i), xs)\n' >"$WORK/reversal-distinct.strata"

# Each build runs its own tree's examples (the before's: BEFORE_EXAMPLES,
# by default beside its build folder), as they were written for it: the
# examples that permute or compact now say scatterDistinct.
BEFORE_EXAMPLES=${BEFORE_EXAMPLES:-$(dirname "$BEFORE")/../examples}
[ -d "$BEFORE_EXAMPLES" ] || { echo "no examples at $BEFORE_EXAMPLES: set BEFORE_EXAMPLES" >&2; exit 1; }

# name<TAB>program before<TAB>program after<TAB>runs<TAB>inputs
ex() { printf '%s\t%s' "$BEFORE_EXAMPLES/$1.strata" "examples/$1.strata"; }
cases=("repeated (the issue's)	$WORK/repeated.strata	$WORK/repeated.strata	15	xs=$WORK/i32.npy"
    "reversal (scatter)	$WORK/reversal.strata	$WORK/reversal.strata	15	xs=$WORK/i32.npy"
    "reversal (scatterDistinct)	$WORK/reversal.strata	$WORK/reversal-distinct.strata	15	xs=$WORK/i32.npy"
    "semifilter	$(ex filter)	15	xs=$WORK/i32.npy"
    "compaction+count	$(ex exscan_scatter)	15	xs=$WORK/i32.npy"
    "filter (control)	$(ex filter_keep)	15	xs=$WORK/i32.npy"
    "radix sort	$(ex radix_sort)	$SORT_RUNS	xs=$WORK/u32.npy"
    "radix sort kv	$(ex radix_sort_kv)	$SORT_RUNS	xs=$WORK/u32.npy ys=$WORK/values.npy"
    "partition sort (control)	$(ex radix_sort_partition)	$SORT_RUNS	xs=$WORK/u32.npy")

for r in $(seq 1 "$ROUNDS"); do
    echo "round $r of $ROUNDS" >&2
    for i in "${!cases[@]}"; do
        IFS=$'\t' read -r name before after runs inputs <<<"${cases[$i]}"
        args=()
        for x in $inputs; do args+=(--input "$x"); done
        STRATA=$BEFORE TIMED_RUNS=$runs strata_ms "$before" "${args[@]}" >>"$WORK/$i.before.ms"
        STRATA=$AFTER TIMED_RUNS=$runs strata_ms "$after" "${args[@]}" >>"$WORK/$i.after.ms"
    done
done

{
    echo "a scatter's last write in index order, before and after, on $(device_name_of "$WORK/reversal.strata" --size N=1)"
    echo "N = $N, medians of $ROUNDS rounds (ms); strata: the default strategy"
    echo
    printf '| %-28s | %-40s | %10s | %10s | %8s |\n' program "file (after)" before after after/before
    echo "|------------------------------|------------------------------------------|------------|------------|----------|"
    for i in "${!cases[@]}"; do
        IFS=$'\t' read -r name before after runs inputs <<<"${cases[$i]}"
        b=$(median <"$WORK/$i.before.ms") a=$(median <"$WORK/$i.after.ms")
        awk -v name="$name" -v prog="${after#"$WORK"/}" -v b="$b" -v a="$a" 'BEGIN {
            printf "| %-28s | %-40s | %10s | %10s | %8s |\n", name, prog, b, a,
                (b == "n/a" || a == "n/a" || b == 0) ? "n/a" : sprintf("%.2f", a / b) }'
    done
} | tee "$WORK/table.md"
