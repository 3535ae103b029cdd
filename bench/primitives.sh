#!/usr/bin/env bash
# bench/primitives.sh — strata's simplest programs on the default device
# beside hand-written OpenMP loops and Thrust's OpenMP backend, in one run:
# what users write around a scan (a copy, saxpy, a sum, a u8 histogram, a
# filter) and the look-back scan itself, for scale.
#
#   bench/primitives.sh [ROUNDS]
#     ROUNDS  interleaved rounds (default 3): in each, every program and
#             every peer in turn, so that the machine's drift touches all
#             alike; the table gives each one's median over the rounds
#   In the environment:
#     N=…          elements (default 16777216 = 2^24)
#     DEVICE=D     the OpenCL device (default: strata's, PoCL's CPU here)
#     TIMED_RUNS=K timings each strata run and each peer takes the median of (15)
#     CCCL=DIR     the CUDA toolkit's CCCL headers, for Thrust (default: found
#                  under /usr/local/cuda)
#     WORK=DIR     everything goes there (default out/bench-primitives)
#
# strata: `strata run PROG --time` under the device's default strategy (no
# export, no -s), the median of its kernels' profiled times. The peers
# (bench/omp_primitives.c, cc -O3 -march=native -fopenmp; and
# bench/thrust_primitives.cpp) run on every core (nproc threads, pinned) and
# are timed around the call. GB/s counts the bytes a program must read and
# write once: a copy 8 N, saxpy 12 N, a sum 4 N, a u8 histogram N, a filter
# of i32 keeping about half 6 N, a scan 8 N. ratio = the peer's time over
# strata's: above 1, strata is faster.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
N=${N:-16777216}
WORK=${WORK:-out/bench-primitives}
. bench/common.sh
rm -rf "$WORK"
mkdir -p "$WORK"
runs=${TIMED_RUNS:-15}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}

cc -O3 -march=native -fopenmp -Ibench -o "$WORK/omp_primitives" bench/omp_primitives.c
thrust=$(thrust_peer bench/thrust_primitives.cpp "$WORK/thrust_primitives")

# The programs: name, source, strata's arguments, bytes per element, peer.
cat >"$WORK/copy.strata" <<'EOF'
def main(xs: [N]f32): [N]f32 = xs |> map(x => x)
EOF
cat >"$WORK/saxpy.strata" <<'EOF'
def main(xs: [N]f32, ys: [N]f32): [N]f32 = zip(xs, ys) |> map((x, y) => 2.5 * x + y)
EOF
cat >"$WORK/sum.strata" <<'EOF'
def main(xs: [N]f32): f32 = reduce(+, 0.0, xs)
EOF
random_npy '<i4' "$N" "$WORK/signed.npy" # of both signs: the filter keeps about half
names=(copy saxpy sum hist filter scan)
declare -A prog args bytes peer
prog[copy]=$WORK/copy.strata args[copy]="--size N=$N" bytes[copy]=8 peer[copy]=copy
prog[saxpy]=$WORK/saxpy.strata args[saxpy]="--size N=$N" bytes[saxpy]=12 peer[saxpy]=saxpy
prog[sum]=$WORK/sum.strata args[sum]="--size N=$N" bytes[sum]=4 peer[sum]=sum
prog[hist]=examples/image_histogram.strata args[hist]="--size N=$N" bytes[hist]=1 peer[hist]=hist
prog[filter]=examples/filter_keep.strata args[filter]="--input xs=$WORK/signed.npy" bytes[filter]=6 peer[filter]=filter
prog[scan]=examples/prefix_sum.strata args[scan]="--size N=$N" bytes[scan]=8 peer[scan]=

for name in "${names[@]}"; do
    # one checked run first: a variant that is wrong has no time
    # shellcheck disable=SC2086
    "$STRATA" run "${prog[$name]}" ${args[$name]} --check "${device[@]}" >"$WORK/$name-check.log" 2>&1 ||
        { echo "primitives: $name fails its check: $(tail -3 "$WORK/$name-check.log")" >&2; exit 1; }
done

for round in $(seq "$ROUNDS"); do
    for name in "${names[@]}"; do
        # shellcheck disable=SC2086
        strata_ms "${prog[$name]}" ${args[$name]} >>"$WORK/$name.strata.ms"
        p=${peer[$name]}
        [ -n "$p" ] || continue
        "$WORK/omp_primitives" "$p" "$N" "$runs" 2>/dev/null >>"$WORK/$name.omp.ms"
        if [ -n "$thrust" ] && [ "$p" != hist ]; then
            "$thrust" "$p" "$N" "$runs" 2>/dev/null >>"$WORK/$name.thrust.ms"
        fi
    done
    echo "primitives: round $round of $ROUNDS done" >&2
done

med() { [ -s "$1" ] && median <"$1" || echo n/a; }
gbs() { [ "$1" = n/a ] && echo n/a || awk -v ms="$1" -v b="$2" -v n="$N" 'BEGIN { printf "%.1f", b * n / ms / 1e6 }'; }
ratio() { { [ "$1" = n/a ] || [ "$2" = n/a ]; } && echo n/a || awk -v p="$1" -v s="$2" 'BEGIN { printf "%.2f", p / s }'; }

echo
echo "N = $N, $(device_name_of "$WORK/sum.strata" --size N=7), $ROUNDS rounds; peers on $OMP_NUM_THREADS threads"
echo "$(grep -c avx512 /proc/cpuinfo 2>/dev/null | awk '{ print ($1 > 0 ? "AVX-512" : "no AVX-512") }') on this CPU"
echo
echo "| program | strata ms | GB/s | OpenMP ms | GB/s | OpenMP / strata | Thrust ms | Thrust / strata |"
echo "|---|---|---|---|---|---|---|---|"
for name in "${names[@]}"; do
    s=$(med "$WORK/$name.strata.ms") o=$(med "$WORK/$name.omp.ms") t=$(med "$WORK/$name.thrust.ms")
    echo "| $name | $s | $(gbs "$s" "${bytes[$name]}") | $o | $(gbs "$o" "${bytes[$name]}") | $(ratio "$o" "$s") | $t | $(ratio "$t" "$s") |"
done
