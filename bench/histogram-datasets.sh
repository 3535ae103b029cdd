#!/usr/bin/env bash
# bench/histogram-datasets.sh — strata's histograms on the twelve datasets
# of the subhistogramming thesis' figure 34, beside a sequential C
# histogram and an OpenMP one, in one run on one device.
#
#   bench/histogram-datasets.sh [N] [RUNS] [ROUNDS]
#     N       indices per dataset (default 20000000, as [Hellfritsch 2018])
#     RUNS    timings per measurement (default 9)
#     ROUNDS  rounds of the three side by side on each dataset (default 3):
#             the table gives each one's median over them, so that a burst
#             of the machine's other work in one round moves no row
#   SPACE='…' in the environment explores another space of subhistogram's
#   parameters (SPACE=none explores nothing: the peers and the heuristic), DEVICE=D picks the OpenCL device, WORK=DIR puts everything
#   elsewhere (default out/bench-histogram).
#
# The datasets (bench/hist_seq.c makes them, seeded): uniform indices over
# 16, 256, 4096 and 65536 buckets; a normal around the middle of 2048
# buckets with standard deviation 64, 128, 256 and 512, truncated; every
# index in one bucket of 16, 256, 4096 and 65536. For each, in turn:
#   - the sequential C histogram (bench/hist_seq.c, cc -O2), median of RUNS;
#   - the OpenMP peer (bench/hist_omp.c, cc -O2 -fopenmp): THREADS threads
#     (default 2, the machine's cores), each counting chunks it takes into a
#     private copy, the copies then added up; median of RUNS;
#   - strata's heuristic, `subhistogram` with nothing given (C = H in
#     global memory, min(H, B) in local memory, local where it fits, the
#     atomic the operator allows), by `strata run --time`;
#   - strata's best point of SPACE, by `strata explore`, which also checks
#     every point against the interpreter.
# The table gives the times, the heuristic's speed-ups over the sequential
# histogram (as [Hellfritsch 2018]'s figure 34 does) and over the OpenMP peer, and
# the best point's over the sequential one. The three run in turn,
# ROUNDS times on each dataset, before the exploration. The load average before and
# after is printed with it: the machine may be shared, and a peer of two
# threads on a machine with one core free is no faster than one.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-20000000}
RUNS=${2:-9}
ROUNDS=${3:-3}
THREADS=${THREADS:-2}
SPACE=${SPACE:-'subhistogram(C=[1, 16, 256, 4096, 65536], MEM=[global, local], ATOMIC=[add, xchg])'}
WORK=${WORK:-out/bench-histogram}
PROGRAM=examples/histogram.strata
TIMED_RUNS=$RUNS
. bench/common.sh
rm -rf "$WORK"
mkdir -p "$WORK"
cc -O2 -o "$WORK/hist_seq" bench/hist_seq.c -lm
cc -O2 -fopenmp -o "$WORK/hist_omp" bench/hist_omp.c
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

datasets=("uniform 16" "uniform 256" "uniform 4096" "uniform 65536"
          "normal:64 2048" "normal:128 2048" "normal:256 2048" "normal:512 2048"
          "single 16" "single 256" "single 4096" "single 65536")

rows=()
for d in "${datasets[@]}"; do
    read -r kind h <<<"$d"
    data="$WORK/data.npy"
    echo "$kind, H=$h" >&2
    "$WORK/hist_seq" make "$kind" "$h" "$N" 1 "$data"
    seqs=() omps=() heurs=()
    for _ in $(seq 1 "$ROUNDS"); do
        seqs+=("$("$WORK/hist_seq" time "$data" "$h" "$RUNS" 2>/dev/null)")
        omps+=("$("$WORK/hist_omp" "$data" "$h" "$RUNS" "$THREADS" 2>/dev/null)")
        heurs+=("$(strata_ms "$PROGRAM" -s subhistogram --input "is=$data" --input "H=$h")")
    done
    seq_ms=$(printf '%s\n' "${seqs[@]}" | median)
    omp_ms=$(printf '%s\n' "${omps[@]}" | median)
    heur_ms=$(printf '%s\n' "${heurs[@]}" | median)
    dir="$WORK/explored-${kind/:/-}-$h"
    best=
    if [ "$SPACE" != none ]; then
        "$STRATA" explore "$PROGRAM" --space "$SPACE" --input "is=$data" --input "H=$h" --out "$dir" \
            --runs "$RUNS" --cache "$WORK/cache" "${device[@]}" >"$dir.log" 2>&1 || true
        best=$(best_of "$dir")
    fi
    rows+=("$kind	$h	$seq_ms	$omp_ms	$heur_ms	$best")
    rm -f "$data"
done

device_name=$(device_name_of "$PROGRAM" --size N=1 --input H=1)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
{
    printf 'histograms of %d i32 indices on %s; medians in ms (of %d rounds of medians of %d runs); speed-ups (x) are the other time over strata'"'"'s\n' "$N" "$device_name" "$ROUNDS" "$RUNS"
    printf 'load average %s before, %s after, on %s cores\n\n' "$load_before" "$load_after" "$(nproc)"
    printf '| dataset | H | sequential C | OpenMP, %d threads | strata, heuristic | over sequential | over OpenMP | strata, best | over sequential | best variant |\n' "$THREADS"
    printf '|---|---|---|---|---|---|---|---|---|---|\n'
    for r in "${rows[@]}"; do
        IFS=$'\t' read -r kind h seq omp heur best_ms best_s <<<"$r"
        awk -v k="$kind" -v h="$h" -v s="$seq" -v o="$omp" -v he="$heur" -v b="$best_ms" -v bs="$best_s" 'BEGIN {
            x = b > 0 ? sprintf("%.2f | %.2f", b, s / b) : "n/a | n/a"
            printf "| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %s | `%s` |\n", k, h, s, o, he, s / he, o / he, x, bs }'
    done
} | tee "$WORK/table.md"
