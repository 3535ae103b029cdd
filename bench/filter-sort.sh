#!/usr/bin/env bash
# bench/filter-sort.sh — strata's filter and radix sort on a CPU (PoCL)
# beside what they are measured against there, in one run, several rounds
# (issue 22):
#   (a) a filter of 2^24 random i32 keeping the positive ones (about half),
#       against a copy kernel of the same bytes (the limit: a filter reads
#       each element once and writes each kept one once). Today's programs:
#       examples/filter.strata (the kept elements at the front of a buffer
#       of N) and examples/exscan_scatter.strata (the same compaction and
#       its count), and examples/filter_keep.strata (`filter(p, xs)`, a
#       result of run-time length), all under the default strategy;
#       Beside them a sum of the same 2^24 i32 (a top-level reduce, in
#       chunks by the default strategy's parallel-reduce), against the copy;
#   (b) sort(xs) and sort_by_key(ks, vs) of 2^24 random u32 (with i32
#       values; examples/sort.strata and sort_by_key.strata: a radix sort
#       of 8-bit digits by the rules radix-sort and partition-tiles), and
#       the one-bit LSD radix sort written in strata (examples/radix_sort.strata,
#       and examples/radix_sort_partition.strata, the same as a loop of
#       partition + concat) and its key-value variant (examples/radix_sort_kv.strata), against
#       Thrust's OpenMP sort and sort_by_key, qsort, and a sequential C LSD
#       radix sort (bench/sort_seq.c).
#
#   bench/filter-sort.sh [ROUNDS]
#     ROUNDS  rounds of the side-by-side timings (default 3)
#   In the environment:
#     N=…        the length (default 16777216 = 2^24)
#     SORT_RUNS  timed runs per round of each sort (default 3; a sort takes
#                seconds), TIMED_RUNS those of the filters and the copy (15)
#     DEVICE=D   the OpenCL device (default: strata's, PoCL's CPU here)
#     CCCL=DIR   the CUDA toolkit's CCCL headers, for Thrust (default: found
#                under /usr/local/cuda)
#     WORK=DIR   everything goes there (default out/bench-filter-sort)
#
# strata runs with no -s: the default strategy (or an exported variant) for
# the device, as a user's `strata run` does. Each round times, in turn, so
# that the machine's drift touches all alike: every strata program by
# `strata run --time` (median of its runs), the copy, and the peers (each
# prints its median). The table gives the medians over the rounds, GB/s of
# the bytes read and written, and the ratios: the filter's throughput over
# the copy's, and the sort's speed-up over each peer (above 1: strata is
# faster).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
N=${N:-16777216}
SORT_RUNS=${SORT_RUNS:-3}
WORK=${WORK:-out/bench-filter-sort}
. bench/common.sh
rm -rf "$WORK"
mkdir -p "$WORK"

cc -O2 -Ibench -o "$WORK/sort_seq" bench/sort_seq.c
thrust=$(thrust_peer bench/thrust_sort.cpp "$WORK/thrust_sort")
threads=$(nproc)

random_npy '<i4' "$N" "$WORK/i32.npy"
random_npy '<u4' "$N" "$WORK/u32.npy"
random_npy '<i4' "$N" "$WORK/values.npy"
copy_program i32 "$WORK/copy_i32.strata"
printf 'def main(xs: [N]i32): i32 =\n  xs |> reduce(+, 0)\n' >"$WORK/sum_i32.strata"

# The filters: name<TAB>program.
filters=("filter(p, xs)	examples/filter_keep.strata" "semifilter	examples/filter.strata"
    "compaction+count	examples/exscan_scatter.strata")

for r in $(seq 1 "$ROUNDS"); do
    echo "round $r of $ROUNDS" >&2
    strata_ms "$WORK/copy_i32.strata" --input xs="$WORK/i32.npy" >>"$WORK/copy.ms"
    strata_ms "$WORK/sum_i32.strata" --input xs="$WORK/i32.npy" >>"$WORK/sum.ms"
    for f in "${filters[@]}"; do
        IFS=$'\t' read -r name prog <<<"$f"
        strata_ms "$prog" --input xs="$WORK/i32.npy" >>"$WORK/filter_$(basename "$prog" .strata).ms"
    done
    TIMED_RUNS=$SORT_RUNS strata_ms examples/sort.strata --input xs="$WORK/u32.npy" >>"$WORK/sort.ms"
    TIMED_RUNS=$SORT_RUNS strata_ms examples/sort_by_key.strata --input ks="$WORK/u32.npy" \
        --input vs="$WORK/values.npy" >>"$WORK/sort_kv.ms"
    TIMED_RUNS=$SORT_RUNS strata_ms examples/radix_sort.strata --input xs="$WORK/u32.npy" >>"$WORK/radix.ms"
    TIMED_RUNS=$SORT_RUNS strata_ms examples/radix_sort_partition.strata --input xs="$WORK/u32.npy" >>"$WORK/radix_part.ms"
    TIMED_RUNS=$SORT_RUNS strata_ms examples/radix_sort_kv.strata --input xs="$WORK/u32.npy" \
        --input ys="$WORK/values.npy" >>"$WORK/radix_kv.ms"
    for how in qsort radix qsort-kv radix-kv; do
        "$WORK/sort_seq" "$N" "$SORT_RUNS" "$how" >>"$WORK/seq_$how.ms"
    done
    if [ -n "$thrust" ]; then
        OMP_NUM_THREADS=$threads "$thrust" "$N" "$SORT_RUNS" sort >>"$WORK/thrust_sort.ms"
        OMP_NUM_THREADS=$threads "$thrust" "$N" "$SORT_RUNS" kv >>"$WORK/thrust_kv.ms"
    fi
done

med() { median <"$WORK/$1.ms" 2>/dev/null || echo n/a; }
device_name=$(device_name_of "$WORK/copy_i32.strata" --size N=1)
copy=$(med copy)
{
    echo "filter and radix sort on $device_name, N = $N, medians of $ROUNDS rounds (ms)"
    echo "Thrust: OpenMP, $threads threads; C sorts: cc -O2, one thread; strata: the default strategy"
    echo
    echo "(a) filter of random i32 keeping the positive ones (about half); GB/s of N elements read and N written"
    echo
    printf '| %-18s | %-38s | %10s | %7s | %6s |\n' program file ms GB/s /copy
    echo "|--------------------|----------------------------------------|------------|---------|--------|"
    rows=("copy (map(x => x))	$WORK/copy_i32.strata	$copy")
    for f in "${filters[@]}"; do
        IFS=$'\t' read -r name prog <<<"$f"
        rows+=("$name	$prog	$(med "filter_$(basename "$prog" .strata)")")
    done
    for row in "${rows[@]}"; do
        IFS=$'\t' read -r name prog ms <<<"$row"
        awk -v name="$name" -v prog="$prog" -v ms="$ms" -v copy="$copy" -v n="$N" 'BEGIN {
            if (ms == "n/a" || ms == "") { printf "| %-18s | %-38s | %10s | %7s | %6s |\n", name, prog, "n/a", "", ""; exit }
            printf "| %-18s | %-38s | %10.2f | %7.2f | %6.2f |\n", name, prog, ms, 8 * n / ms / 1e6,
                copy == "n/a" ? 0 : copy / ms }'
    done
    echo
    echo "/copy: the filter's throughput over the copy kernel's (issue 22's target: >= 0.8)"
    echo
    awk -v ms="$(med sum)" -v copy="$copy" -v n="$N" 'BEGIN {
        if (ms == "n/a" || ms == "") { print "sum (xs |> reduce(+, 0)): n/a"; exit }
        printf "sum (xs |> reduce(+, 0)): %.2f ms, %.2f GB/s of N elements read; the copy'"'"'s time over the sum'"'"'s: %.2f\n",
            ms, 4 * n / ms / 1e6, copy == "n/a" ? 0 : copy / ms }'
    echo
    echo "(b) sorts of random u32 (sort: examples/sort.strata, sort(xs); sort_kv: sort_by_key.strata, with i32 values;"
    echo "    the one-bit radix sorts written in strata: keys: radix_sort.strata; part: radix_sort_partition.strata, a loop"
    echo "    of partition + concat; kv: radix_sort_kv.strata, with i32 values); strata's speed-up over each peer (above 1: faster)"
    echo
    printf '| %-7s | %10s | %10s | %10s | %10s | %10s | %8s | %7s | %8s |\n' sort strata "Thrust OMP" qsort "C radix" \
        "GB/s" /Thrust /qsort "/C radix"
    echo "|---------|------------|------------|------------|------------|------------|----------|---------|----------|"
    for kind in sort sort_kv keys part kv; do
        if [ $kind = sort ]; then s=$(med sort) t=$(med thrust_sort) q=$(med seq_qsort) c=$(med seq_radix) bytes=8
        elif [ $kind = sort_kv ]; then s=$(med sort_kv) t=$(med thrust_kv) q=$(med seq_qsort-kv) c=$(med seq_radix-kv) bytes=16
        elif [ $kind = keys ]; then s=$(med radix) t=$(med thrust_sort) q=$(med seq_qsort) c=$(med seq_radix) bytes=8
        elif [ $kind = part ]; then s=$(med radix_part) t=$(med thrust_sort) q=$(med seq_qsort) c=$(med seq_radix) bytes=8
        else s=$(med radix_kv) t=$(med thrust_kv) q=$(med seq_qsort-kv) c=$(med seq_radix-kv) bytes=16; fi
        awk -v k="$kind" -v s="$s" -v t="$t" -v q="$q" -v c="$c" -v n="$N" -v bytes="$bytes" '
            function cell(ms) { return ms == "n/a" || ms == "" ? sprintf("%10s", "n/a") : sprintf("%10.1f", ms) }
            function ratio(ms) { return ms == "n/a" || ms == "" || s == "n/a" || s == "" ? "n/a" : sprintf("%.2f", ms / s) }
            BEGIN {
                printf "| %-7s | %s | %s | %s | %s | %10.3f | %8s | %7s | %8s |\n", k, cell(s), cell(t), cell(q), cell(c),
                    s == "n/a" || s == "" ? 0 : bytes * n / s / 1e6, ratio(t), ratio(q), ratio(c) }'
    done
    echo
    echo "GB/s: N keys (and values) read and written once, per second of strata's sort (a copy of them moves that)."
    echo "/Thrust, /qsort, /C radix: the peer's time over strata's (issue 45's target for sort against Thrust: >= 1.5)"
} | tee "$WORK/table.md"
