# bench/common.sh — what the benchmark scripts share; sourced, from the
# project's root, after the script has set its own variables.
#   DEVICE=D in the environment picks the device (as --device takes it);
#   TIMED_RUNS (default 15) is how many runs `strata_ms` takes the median of;
#   STRATA=PATH runs a strata built elsewhere, unbuilt here (a GPU machine
#   with no compiler packages: carry the binary); else build/strata, built.

device=()
[ -n "${DEVICE:-}" ] && device=(--device "$DEVICE")
if [ -z "${STRATA:-}" ]; then
    STRATA=build/strata
    ./dev.sh build >/dev/null
fi

# The median of the numbers on standard input, one a line ("n/a" for none).
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print "n/a" }'
}

# The median ms of `strata run ARGS… --time` on the device.
strata_ms() {
    "$STRATA" run "$@" --time --runs "${TIMED_RUNS:-15}" "${device[@]}" 2>&1 | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'
}

# An exploration's fastest ok point, "median<TAB>strategy" (nothing when none ran).
best_of() {
    { sed -n 's/^{"point": [0-9]*, "strategy": "\([^"]*\)", .*"status": "ok".*"median_ms": \([0-9.eE+-]*\),.*/\2\t\1/p' \
        "$1/results.jsonl" 2>/dev/null || true; } | sort -t$'\t' -k1,1g | head -1
}

# The device's name as `strata run ARGS…` reports it.
device_name_of() {
    "$STRATA" run "$@" "${device[@]}" 2>&1 | sed -n 's/^device [0-9]*: \(.*\); .*/\1/p'
}

# copy_program TYPE FILE: a copy of an array of TYPE written by strata
# (`xs |> map(x => x)`): the limit a scan of the same bytes is measured by.
copy_program() {
    printf 'def main(xs: [N]%s): [N]%s =\n  xs |> map(x => x)\n' "$1" "$1" >"$2"
}

# faster A B: whether best_of's line A is faster than B (either may be empty).
faster() {
    [ -n "$1" ] && { [ -z "$2" ] || awk -v a="${1%%$'\t'*}" -v b="${2%%$'\t'*}" 'BEGIN { exit !(a < b) }'; }
}

# thrust_peer SRC OUT: builds SRC (a Thrust program) with Thrust's OpenMP
# backend from the CUDA toolkit's CCCL headers (or CCCL=DIR) into OUT and
# prints OUT; prints nothing, and says why on stderr, when it cannot.
thrust_peer() {
    local src=$1 out=$2 cccl=${CCCL:-} d
    if [ -z "$cccl" ]; then
        for d in /usr/local/cuda/include/cccl /usr/local/cuda/targets/x86_64-linux/include/cccl /usr/local/cuda/include; do
            [ -f "$d/thrust/version.h" ] && { cccl=$d; break; }
        done
    fi
    if [ -z "$cccl" ]; then
        echo "thrust: no CCCL headers (thrust/version.h) under /usr/local/cuda; set CCCL=DIR" >&2
    elif ! g++ -O3 -fopenmp -DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP -I"$cccl" -Ibench \
            -o "$out" "$src" 2>"$out-build.log"; then
        echo "thrust: $src did not build; see $out-build.log" >&2
    else
        echo "$out"
    fi
}
