#!/usr/bin/env bash
# bench/gpu-peers.sh — strata on a GPU beside its peers, in one run on one
# device: explore and export the scan and histogram spaces, then time
# strata's best against what a GPU engineer would use instead.
#
#   bench/gpu-peers.sh [N] [ROUNDS]
#     N       the i32 prefix sum's length (default 268435456 = 2^28)
#     ROUNDS  rounds of the side-by-side timings (default 5)
#   In the environment:
#     DEVICE=D     the device as --device takes it (default: the first GPU);
#                  `cuda` or `cuda:0` runs strata through its CUDA backend
#     HIST_N=M     indices per histogram dataset (default 20000000, as [Hellfritsch 2018])
#     HIST_DATASETS=…  which of [Hellfritsch 2018]'s twelve, as kind/H (default all:
#                  "uniform/16 … normal:64/2048 … single/65536")
#     PHASES=…     any of `scan`, `hist` and `filter` (default all three)
#     FILTER_N=M   the filters' length (default 67108864 = 2^26 random i32)
#     SORT_N=M     the sorts' length (default 16777216 = 2^24 random u32)
#     RESULTS=DIR  where the exports go (default results: commit them)
#     WORK=DIR     everything else (default out/bench-gpu)
#
# Scan (examples/prefix_sum_i32.strata at N):
#   1. `strata explore` of [Pizzuti et al. 2022]'s space, parallel-scan(BS × SE), and of
#      the look-back space (GPU shapes); every point is checked against the
#      interpreter. The faster space's exploration is exported into RESULTS.
#   2. ROUNDS times in turn, so that the device's drift touches all alike:
#      strata's best of each space (`strata run --time`, median of 15); a
#      copy of the same bytes by strata (map(x => x)); and, from
#      bench/cub_peers.cu (built here with nvcc), a device-to-device
#      cudaMemcpy and CUB's DeviceScan::InclusiveSum, which is what
#      torch.cumsum runs. When PyTorch is here, torch.cumsum and
#      torch.clone are timed too, on the same sizes.
# Histograms (examples/histogram.strata on the twelve datasets of the
# thesis, bench/hist_seq.c makes them): for each, the heuristic
# (`subhistogram`), the best point of a GPU space, explored and exported as
# results/<device>/histogram_<dataset>/, CUB's DeviceHistogram::HistogramEven
# and, with PyTorch, torch.bincount.
#
# Filters and sorts (issue 22's programs, under the default strategy, as a
# user's `strata run` runs them): examples/filter_keep.strata, filter.strata
# and partition.strata on FILTER_N random i32 beside cudaMemcpy and CUB's
# DeviceSelect::If; radix_sort.strata and radix_sort_kv.strata on SORT_N
# random u32 (and i32 values) beside CUB's DeviceRadixSort SortKeys and
# SortPairs. Table: WORK/filter-sort.md.
# Ratios, not times, are the result: the scan's throughput over the copy's
# (the limit) and over CUB's, and each histogram's speed-up over CUB's.
# Tables go to WORK/scan.md and WORK/histogram.md. A peer that cannot run
# here (no nvcc, no CUDA GPU, no PyTorch) is a column of "n/a" and a line
# saying why, not a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-268435456}
ROUNDS=${2:-5}
HIST_N=${HIST_N:-20000000}
PHASES=${PHASES:-scan hist filter}
FILTER_N=${FILTER_N:-67108864}
SORT_N=${SORT_N:-16777216}
RESULTS=${RESULTS:-results}
WORK=${WORK:-out/bench-gpu}
PAPER_SPACE=${PAPER_SPACE:-'parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])'}
LOOKBACK_SPACE=${LOOKBACK_SPACE:-'lookback(M=[4, 8, 12, 16, 24, 32], WG=[128, 256, 512, 1024], LW=[1, 32]) where M * WG <= 16384'}
HIST_SPACE=${HIST_SPACE:-'subhistogram(C=[1, 4, 16, 64, 256, 1024], MEM=[global, local], ATOMIC=[add, cas])'}
. bench/common.sh
mkdir -p "$WORK" "$RESULTS"
say() { echo "[${SECONDS} s] $*" >&2; }

nvidia_opencl
device_name=$(device_name_of examples/prefix_sum_i32.strata --size N=1)
say "device: $device_name"

# ---- the peers: CUB (built here), PyTorch (when installed) ----
cub="$WORK/cub_peers"
cub_why=""
if ! command -v nvcc >/dev/null; then
    cub_why="no nvcc here (the CUDA toolkit builds bench/cub_peers.cu)"
elif [ ! "$cub" -nt bench/cub_peers.cu ] && # else built by an earlier run
    ! nvcc -O2 -std=c++17 -arch=native -o "$cub" bench/cub_peers.cu 2>"$WORK/nvcc.log" &&
    ! nvcc -O2 -std=c++17 -arch=sm_90 -o "$cub" bench/cub_peers.cu 2>"$WORK/nvcc.log"; then
    cub_why="bench/cub_peers.cu does not build: see $WORK/nvcc.log"
elif ! "$cub" scan 1024 1 >/dev/null 2>"$WORK/cub.log"; then
    cub_why="CUB does not run here: $(head -1 "$WORK/cub.log")"
fi
[ -n "$cub_why" ] && say "CUB and cudaMemcpy: n/a: $cub_why"
torch_why=""
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
    torch_why="no PyTorch with a CUDA GPU here"
[ -n "$torch_why" ] && say "PyTorch: n/a: $torch_why"
# torch_ms WHAT SIZE…: the median ms of a PyTorch operation on the GPU, by CUDA events
torch_ms() {
    python3 - "$@" <<'PY'
import statistics, sys, numpy, torch
what, runs = sys.argv[1], 15
if what == "hist":
    xs = torch.from_numpy(numpy.load(sys.argv[2]).astype(numpy.int64)).cuda()
    h = int(sys.argv[3])
    op = lambda: torch.bincount(xs, minlength=h)
else:
    xs = (torch.arange(int(sys.argv[2]), dtype=torch.int32, device="cuda") % 7) - 3
    op = (lambda: torch.cumsum(xs, 0, dtype=torch.int32)) if what == "cumsum" else (lambda: xs.clone())
op(); torch.cuda.synchronize()
times = []
for _ in range(runs):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); op(); b.record(); b.synchronize()
    times.append(a.elapsed_time(b))
print(f"{statistics.median(times):.4f}")
PY
}

# ---- the scan ----
if [[ " $PHASES " == *" scan "* ]]; then
    prog=examples/prefix_sum_i32.strata
    for space in paper lookback; do
        s=$PAPER_SPACE
        [ $space = lookback ] && s=$LOOKBACK_SPACE
        say "explore $space: $s, N=$N"
        rm -rf "$WORK/explored-$space"
        "$STRATA" explore "$prog" --size "N=$N" --space "$s" --out "$WORK/explored-$space" --cache "$WORK/cache" \
            "${device[@]}" >"$WORK/explore-$space.log" 2>&1 || say "explore $space failed: see $WORK/explore-$space.log"
    done
    paper=$(best_of "$WORK/explored-paper")
    lookback=$(best_of "$WORK/explored-lookback")
    [ -n "$paper$lookback" ] || { say "no variant of either space ran; see $WORK/explore-*.log"; exit 1; }
    winner=paper
    if faster "$lookback" "$paper"; then
        winner=lookback
    fi
    say "export the $winner space's best into $RESULTS"
    "$STRATA" export "$WORK/explored-$winner" --into "$RESULTS" --cache "$WORK/cache" >"$WORK/export-scan.log" 2>&1 ||
        say "export failed: see $WORK/export-scan.log"
    copy_program i32 "$WORK/copy.strata"
    for f in paper lookback copy cudamemcpy cub torch_clone torch_cumsum; do : >"$WORK/$f.ms"; done
    for r in $(seq 1 "$ROUNDS"); do
        say "round $r of $ROUNDS"
        [ -n "$paper" ] && strata_ms "$prog" -s "${paper#*$'\t'}" --size "N=$N" >>"$WORK/paper.ms"
        [ -n "$lookback" ] && strata_ms "$prog" -s "${lookback#*$'\t'}" --size "N=$N" >>"$WORK/lookback.ms"
        strata_ms "$WORK/copy.strata" --size "N=$N" >>"$WORK/copy.ms"
        if [ -z "$cub_why" ]; then
            read -r cp cs < <("$cub" scan "$N" 15)
            echo "$cp" >>"$WORK/cudamemcpy.ms"
            echo "$cs" >>"$WORK/cub.ms"
        fi
        if [ -z "$torch_why" ]; then
            torch_ms clone "$N" >>"$WORK/torch_clone.ms"
            torch_ms cumsum "$N" >>"$WORK/torch_cumsum.ms"
        fi
    done
    {
        printf 'i32 prefix sum of %d elements on %s; medians of %d rounds (each the median of 15 runs)\n\n' "$N" "$device_name" "$ROUNDS"
        printf '| | ms | GB/s | throughput / copy | speed-up over CUB |\n|---|---|---|---|---|\n'
        copy_ms=$(median <"$WORK/cudamemcpy.ms")
        [ "$copy_ms" = n/a ] && copy_ms=$(median <"$WORK/copy.ms") # no cudaMemcpy: strata's copy is the limit
        cub_ms=$(median <"$WORK/cub.ms")
        row() {
            awk -v name="$1" -v ms="$2" -v n="$N" -v copy="$copy_ms" -v cub="$cub_ms" 'BEGIN {
                if (ms == "n/a" || ms == "") { printf "| %s | n/a | | | |\n", name; exit }
                printf "| %s | %.3f | %.1f | %.2f | %s |\n", name, ms, 8 * n / ms / 1e6, copy / ms,
                    cub == "n/a" ? "n/a" : sprintf("%.2f", cub / ms) }'
        }
        row "strata, paper space: \`${paper#*$'\t'}\`" "$(median <"$WORK/paper.ms")"
        row "strata, look-back space: \`${lookback#*$'\t'}\`" "$(median <"$WORK/lookback.ms")"
        row "strata copy kernel (map(x => x))" "$(median <"$WORK/copy.ms")"
        row "cudaMemcpy device to device" "$(median <"$WORK/cudamemcpy.ms")"
        row "CUB DeviceScan::InclusiveSum" "$cub_ms"
        row "torch.clone" "$(median <"$WORK/torch_clone.ms")"
        row "torch.cumsum" "$(median <"$WORK/torch_cumsum.ms")"
        printf '\nthroughput / copy is against cudaMemcpy where it ran, else strata'"'"'s copy kernel.\n'
        [ -n "$cub_why" ] && printf 'CUB, cudaMemcpy: n/a: %s\n' "$cub_why"
        [ -n "$torch_why" ] && printf 'PyTorch: n/a: %s\n' "$torch_why"
        true
    } | tee "$WORK/scan.md"
fi

# ---- the histograms ----
if [[ " $PHASES " == *" hist "* ]]; then
    cc -O2 -o "$WORK/hist_seq" bench/hist_seq.c -lm
    datasets=(${HIST_DATASETS:-uniform/16 uniform/256 uniform/4096 uniform/65536
              normal:64/2048 normal:128/2048 normal:256/2048 normal:512/2048
              single/16 single/256 single/4096 single/65536})
    mkdir -p "$WORK/programs"
    rows=()
    for d in "${datasets[@]}"; do
        kind=${d%/*} h=${d##*/}
        name="histogram_${kind/:/_}_$h"
        data="$WORK/data.npy"
        say "$kind, H=$h"
        "$WORK/hist_seq" make "$kind" "$h" "$HIST_N" 1 "$data"
        # a program of the dataset's name, so that each exports to a folder of its own
        cp examples/histogram.strata "$WORK/programs/$name.strata"
        prog="$WORK/programs/$name.strata"
        heur=$(strata_ms "$prog" -s subhistogram --input "is=$data" --input "H=$h")
        rm -rf "$WORK/explored-$name"
        "$STRATA" explore "$prog" --space "$HIST_SPACE" --input "is=$data" --input "H=$h" --out "$WORK/explored-$name" \
            --cache "$WORK/cache" "${device[@]}" >"$WORK/explore-$name.log" 2>&1 || true
        best=$(best_of "$WORK/explored-$name")
        [ -n "$best" ] && { "$STRATA" export "$WORK/explored-$name" --into "$RESULTS" --cache "$WORK/cache" \
            >"$WORK/export-$name.log" 2>&1 || say "export of $name failed: see $WORK/export-$name.log"; }
        cub_ms=n/a torch=n/a
        [ -z "$cub_why" ] && cub_ms=$("$cub" hist "$data" "$h" 15)
        [ -z "$torch_why" ] && torch=$(torch_ms hist "$data" "$h")
        rows+=("$kind	$h	$heur	${best:-n/a	-}	$cub_ms	$torch")
    done
    rm -f "$WORK/data.npy"
    {
        printf 'histograms of %d i32 indices on %s; medians in ms, speed-ups over CUB'"'"'s HistogramEven\n\n' "$HIST_N" "$device_name"
        printf '| dataset | H | strata, heuristic | speed-up | strata, best | speed-up | CUB | torch.bincount | best variant |\n'
        printf '|---|---|---|---|---|---|---|---|---|\n'
        for r in "${rows[@]}"; do
            IFS=$'\t' read -r kind h heur best_ms best_s cub_ms torch <<<"$r"
            awk -v k="$kind" -v h="$h" -v he="$heur" -v b="$best_ms" -v bs="$best_s" -v c="$cub_ms" -v t="$torch" '
                function up(x) { return (c == "n/a" || x == "n/a" || x == "") ? "n/a" : sprintf("%.2f", c / x) }
                function ms(x) { return (x == "n/a" || x == "") ? "n/a" : sprintf("%.3f", x) }
                BEGIN { printf "| %s | %d | %s | %s | %s | %s | %s | %s | `%s` |\n", k, h, ms(he), up(he), ms(b), up(b),
                        ms(c), ms(t), bs }'
        done
        [ -n "$cub_why" ] && printf '\nCUB: n/a: %s\n' "$cub_why"
        [ -n "$torch_why" ] && printf 'PyTorch: n/a: %s\n' "$torch_why"
        true
    } | tee "$WORK/histogram.md"
fi

# ---- filters and sorts ----
if [[ " $PHASES " == *" filter "* ]]; then
    say "filters of $FILTER_N i32, sorts of $SORT_N u32"
    random_npy '<i4' "$FILTER_N" "$WORK/i32.npy"
    random_npy '<u4' "$SORT_N" "$WORK/u32.npy"
    random_npy '<i4' "$SORT_N" "$WORK/values.npy"
    copy_program i32 "$WORK/copy_i32.strata"
    printf 'def main(xs: [N]i32): i32 =\n  xs |> reduce(+, 0)\n' >"$WORK/sum_i32.strata"
    printf 'def main(xs: [N]f32, ys: [N]f32): [N]f32 =\n  zip(xs, ys) |> map((x, y) => 2.5 * x + y)\n' >"$WORK/saxpy.strata"
    filters=(filter_keep filter partition)
    for f in copy_i32 sum_i32 saxpy "${filters[@]}" sort sort_by_key radix_sort radix_sort_kv cudamemcpy_i32 cub_select cub_partition \
        cub_sum cub_sort cub_sort_pairs; do
        : >"$WORK/$f.ms"
    done
    for r in $(seq 1 "$ROUNDS"); do
        say "round $r of $ROUNDS"
        strata_ms "$WORK/copy_i32.strata" --input xs="$WORK/i32.npy" >>"$WORK/copy_i32.ms"
        strata_ms "$WORK/sum_i32.strata" --input xs="$WORK/i32.npy" >>"$WORK/sum_i32.ms"
        strata_ms "$WORK/saxpy.strata" --size N="$FILTER_N" >>"$WORK/saxpy.ms"
        for f in "${filters[@]}"; do
            strata_ms "examples/$f.strata" --input xs="$WORK/i32.npy" >>"$WORK/$f.ms"
        done
        TIMED_RUNS=5 strata_ms examples/sort.strata --input xs="$WORK/u32.npy" >>"$WORK/sort.ms"
        TIMED_RUNS=5 strata_ms examples/sort_by_key.strata --input ks="$WORK/u32.npy" \
            --input vs="$WORK/values.npy" >>"$WORK/sort_by_key.ms"
        TIMED_RUNS=5 strata_ms examples/radix_sort.strata --input xs="$WORK/u32.npy" >>"$WORK/radix_sort.ms"
        TIMED_RUNS=5 strata_ms examples/radix_sort_kv.strata --input xs="$WORK/u32.npy" \
            --input ys="$WORK/values.npy" >>"$WORK/radix_sort_kv.ms"
        if [ -z "$cub_why" ]; then
            read -r cp sel part sum < <("$cub" filter "$WORK/i32.npy" 15)
            echo "$cp" >>"$WORK/cudamemcpy_i32.ms"
            echo "$sel" >>"$WORK/cub_select.ms"
            echo "$part" >>"$WORK/cub_partition.ms"
            echo "$sum" >>"$WORK/cub_sum.ms"
            "$cub" sort "$WORK/u32.npy" 5 >>"$WORK/cub_sort.ms"
            "$cub" sortkv "$WORK/u32.npy" "$WORK/values.npy" 5 >>"$WORK/cub_sort_pairs.ms"
        fi
    done
    rm -f "$WORK"/*.npy
    {
        printf 'filters of %d random i32 (the positive ones, about half; partition: the multiples of 3), sorts of %d random u32\n' \
            "$FILTER_N" "$SORT_N"
        printf 'on %s; medians of %d rounds, in ms; strata under its default strategy\n\n' "$device_name" "$ROUNDS"
        printf '| | ms | GB/s | throughput / copy | speed-up over CUB |\n|---|---|---|---|---|\n'
        copy_ms=$(median <"$WORK/cudamemcpy_i32.ms")
        [ "$copy_ms" = n/a ] && copy_ms=$(median <"$WORK/copy_i32.ms")
        # row NAME MS BYTES PEER_MS [copy]: GB/s of BYTES; with `copy`, the throughput over the copy's
        row() {
            awk -v name="$1" -v ms="$2" -v bytes="$3" -v peer="$4" -v copy="$copy_ms" -v vs_copy="${5:-}" 'BEGIN {
                if (ms == "n/a" || ms == "") { printf "| %s | n/a | | | |\n", name; exit }
                printf "| %s | %.3f | %.1f | %s | %s |\n", name, ms, bytes / ms / 1e6,
                    vs_copy != "" && copy != "n/a" ? sprintf("%.2f", copy / ms) : "",
                    peer == "n/a" || peer == "" ? "" : sprintf("%.2f", peer / ms) }'
        }
        select_ms=$(median <"$WORK/cub_select.ms")
        row "cudaMemcpy of the i32" "$(median <"$WORK/cudamemcpy_i32.ms")" $((8 * FILTER_N)) "" copy
        row "strata copy kernel (map(x => x))" "$(median <"$WORK/copy_i32.ms")" $((8 * FILTER_N)) "" copy
        # a sum reads the bytes once: its GB/s and ratio are of N reads (half a copy's bytes)
        sum_ms=$(median <"$WORK/cub_sum.ms")
        awk -v ms="$(median <"$WORK/sum_i32.ms")" -v copy="$copy_ms" -v n="$FILTER_N" -v peer="$sum_ms" 'BEGIN {
            if (ms == "n/a" || ms == "") { print "| strata sum (xs \\|> reduce(+, 0)) | n/a | | | |"; exit }
            printf "| strata sum (xs \\|> reduce(+, 0)), N read | %.3f | %.1f | %s | %s |\n", ms, 4 * n / ms / 1e6,
                copy == "n/a" ? "" : sprintf("%.2f", copy / 2 / ms), peer == "n/a" || peer == "" ? "" : sprintf("%.2f", peer / ms) }'
        awk -v ms="$sum_ms" -v n="$FILTER_N" 'BEGIN { if (ms != "n/a" && ms != "")
            printf "| CUB DeviceReduce::Sum, N read | %.3f | %.1f | | |\n", ms, 4 * n / ms / 1e6 }'
        # saxpy reads two arrays and writes one: 1.5 copies' bytes
        awk -v ms="$(median <"$WORK/saxpy.ms")" -v copy="$copy_ms" -v n="$FILTER_N" 'BEGIN {
            if (ms == "n/a" || ms == "") { print "| strata saxpy (f32) | n/a | | | |"; exit }
            printf "| strata saxpy (zip(xs, ys) \\|> map((x, y) => 2.5 * x + y)), f32 | %.3f | %.1f | %s | |\n", ms,
                12 * n / ms / 1e6, copy == "n/a" ? "" : sprintf("%.2f", copy * 1.5 / ms) }'
        row "strata \`filter(p, xs)\` (filter_keep.strata)" "$(median <"$WORK/filter_keep.ms")" $((8 * FILTER_N)) "$select_ms" copy
        row "strata semifilter (filter.strata)" "$(median <"$WORK/filter.ms")" $((8 * FILTER_N)) "$select_ms" copy
        part_ms=$(median <"$WORK/cub_partition.ms")
        row "strata \`partition(p, xs)\` (partition.strata)" "$(median <"$WORK/partition.ms")" $((8 * FILTER_N)) "$part_ms" copy
        row "CUB DeviceSelect::If" "$select_ms" $((8 * FILTER_N)) "" copy
        row "CUB DevicePartition::If" "$part_ms" $((8 * FILTER_N)) "" copy
        sort_ms=$(median <"$WORK/cub_sort.ms") pairs_ms=$(median <"$WORK/cub_sort_pairs.ms")
        row "strata \`sort(xs)\` (sort.strata)" "$(median <"$WORK/sort.ms")" $((8 * SORT_N)) "$sort_ms"
        row "strata \`sort_by_key(ks, vs)\` (sort_by_key.strata)" "$(median <"$WORK/sort_by_key.ms")" $((16 * SORT_N)) "$pairs_ms"
        row "strata radix_sort.strata" "$(median <"$WORK/radix_sort.ms")" $((8 * SORT_N)) "$sort_ms"
        row "CUB DeviceRadixSort::SortKeys" "$sort_ms" $((8 * SORT_N)) ""
        row "strata radix_sort_kv.strata" "$(median <"$WORK/radix_sort_kv.ms")" $((16 * SORT_N)) "$pairs_ms"
        row "CUB DeviceRadixSort::SortPairs" "$pairs_ms" $((16 * SORT_N)) ""
        printf '\nGB/s: the elements read and written once (a filter: N read, N written at most; a sum: N read, its\n'
        printf 'ratio against half the copy'"'"'s time, the time to read them); throughput / copy\n'
        printf 'is against cudaMemcpy where it ran, else strata'"'"'s copy kernel.\n'
        [ -n "$cub_why" ] && printf 'CUB, cudaMemcpy: n/a: %s\n' "$cub_why"
        true
    } | tee "$WORK/filter-sort.md"
fi
