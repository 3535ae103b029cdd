#!/usr/bin/env bash
# bench/interp.sh — the reference interpreter's speed: elements per second
# of `strata eval` on a map, a reduction and a scan of i32 and f32, a
# histogram and the radix sort example, at N elements, so that `--check`'s
# cost can be seen beside the device's.
#
#   bench/interp.sh [ROUNDS]
#     ROUNDS  interleaved rounds (default 3); the table gives medians
#   In the environment:
#     N=…          elements (default 1000000)
#     BEFORE=PATH  a strata built from another commit: its column beside
#                  this one's, in the same rounds ("before and after")
#     WORK=DIR     the programs go there (default out/bench-interp)
#
# A program's time is `strata eval`'s wall time less that of a baseline
# reading one element of the same inputs (parsing, generating N random
# inputs, starting up): what is left is the interpreter's, and elements/s
# is N over it. A radix sort's elements are its keys (32 passes over them).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
N=${N:-1000000}
WORK=${WORK:-out/bench-interp}
mkdir -p "$WORK"
rm -f "$WORK"/t_* "$WORK"/b_*
if [ -z "${STRATA:-}" ]; then
    STRATA=build/strata
    ./dev.sh build >/dev/null
fi
binaries=("$STRATA")
names=("now")
if [ -n "${BEFORE:-}" ]; then
    binaries=("$BEFORE" "$STRATA")
    names=("before" "now")
fi

# name<TAB>program file<TAB>baseline file<TAB>extra eval arguments
write() { printf '%s\n' "$2" >"$WORK/$1.strata"; }
write map_i32 'def main(xs: [N]i32): [N]i32 = xs |> map(x => x * 3 + 1)'
write reduce_i32 'def main(xs: [N]i32): i32 = xs |> reduce(+, 0)'
write scan_i32 'def main(xs: [N]i32): [N]i32 = xs |> scan(+, 0)'
write base_i32 'def main(xs: [N]i32): i32 = xs[0]'
write map_f32 'def main(xs: [N]f32): [N]f32 = xs |> map(x => x * 0.5 + 0.25)'
write reduce_f32 'def main(xs: [N]f32): f32 = xs |> reduce(+, 0.0)'
write scan_f32 'def main(xs: [N]f32): [N]f32 = xs |> scan(+, 0.0)'
write base_f32 'def main(xs: [N]f32): f32 = xs[0]'
write base_u32 'def main(xs: [N]u32): u32 = xs[0]'
write base_hist 'def main(is: [N]i32, H: i64): i32 = is[0]'
programs=(
    "map i32	$WORK/map_i32.strata	$WORK/base_i32.strata	"
    "reduce i32	$WORK/reduce_i32.strata	$WORK/base_i32.strata	"
    "scan i32	$WORK/scan_i32.strata	$WORK/base_i32.strata	"
    "map f32	$WORK/map_f32.strata	$WORK/base_f32.strata	"
    "reduce f32	$WORK/reduce_f32.strata	$WORK/base_f32.strata	"
    "scan f32	$WORK/scan_f32.strata	$WORK/base_f32.strata	"
    "histogram (256 buckets)	examples/histogram.strata	$WORK/base_hist.strata	--input H=256"
    "radix sort (u32)	examples/radix_sort.strata	$WORK/base_u32.strata	"
)

# seconds of one `strata eval` (wall time, output discarded)
seconds() {
    local bin=$1 prog=$2
    shift 2
    local t0 t1
    t0=$(date +%s.%N)
    "$bin" eval "$prog" --size "N=$N" "$@" >/dev/null
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print "n/a" }'
}

for ((r = 1; r <= ROUNDS; r++)); do
    for b in "${!binaries[@]}"; do
        for p in "${!programs[@]}"; do
            IFS=$'\t' read -r name prog base extra <<<"${programs[$p]}"
            # shellcheck disable=SC2086
            seconds "${binaries[$b]}" "$prog" $extra >>"$WORK/t_${b}_${p}"
            # shellcheck disable=SC2086
            seconds "${binaries[$b]}" "$base" $extra >>"$WORK/b_${b}_${p}"
        done
    done
    echo "interp: round $r of $ROUNDS done" >&2
done

echo
echo "N = $N, $ROUNDS rounds, one core (the interpreter is sequential); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo
header="| program |"
rule="|---|"
for n in "${names[@]}"; do
    header+=" $n s | $n M elements/s |"
    rule+="---|---|"
done
echo "$header"
echo "$rule"
for p in "${!programs[@]}"; do
    IFS=$'\t' read -r name _ <<<"${programs[$p]}"
    row="| $name |"
    for b in "${!binaries[@]}"; do
        t=$(median <"$WORK/t_${b}_${p}")
        base=$(median <"$WORK/b_${b}_${p}")
        row+=$(awk -v t="$t" -v b="$base" -v n="$N" 'BEGIN { own = t - b;
            if (own > 0.0005) printf " %.3f | %.2f |", own, n / own / 1e6; else printf " %.3f | n/a |", own }')
    done
    echo "$row"
done
rm -f "$WORK"/t_* "$WORK"/b_*
