#!/usr/bin/env bash
# bench/gpu-check.sh — every example run on a GPU and checked against the
# reference interpreter, through NVIDIA's OpenCL and through strata's CUDA
# backend, at lengths 1, 7, 1000 and a prime above 10^6, under the default
# strategy for the device (a GPU's: the look-back at WG=128 and a warp-wide
# window, reductions in chunks), several runs at a time. Not a benchmark:
# the CPU suites prove the rules, this proves the kernels where work-items
# really run at once (the look-back's flags, the scatters, the atomics).
#
#   bench/gpu-check.sh
#   In the environment:
#     STRATA=PATH   the strata to run (bench/common.sh: a GPU machine with no
#                   compiler packages runs a carried binary)
#     BACKENDS=…    opencl, cuda or both (default "opencl cuda")
#     SIZES=…       the lengths N (default "1 7 1000 1000003")
#     JOBS=K        runs at a time (default: the cores)
#     WORK=DIR      the logs, one a run (default out/gpu-check)
# Prints one line a run, `ok` or what went wrong, and a summary; exits 1
# when a run failed.
set -euo pipefail
cd "$(dirname "$0")/.."

BACKENDS=${BACKENDS:-opencl cuda}
SIZES=${SIZES:-1 7 1000 1000003}
JOBS=${JOBS:-$(nproc)}
WORK=${WORK:-out/gpu-check}
. bench/common.sh
nvidia_opencl
DEVICE=${DEVICE:-}
rm -rf "$WORK"
mkdir -p "$WORK"

# The lengths an example takes: block_sums' N is a multiple of 256, a
# stencil's at least 2 (each says so when it is not: a refusal, not a run).
sizes_of() {
    case $1 in
        *block_sums*) echo 256 1792 1048576 ;;
        *stencil*) echo "${SIZES/#1 /2 }" ;;
        *) echo "$SIZES" ;;
    esac
}

jobs=()
for prog in examples/*.strata; do
    for n in $(sizes_of "$prog"); do
        for backend in $BACKENDS; do
            jobs+=("$backend $n $prog $(example_args "$prog")")
        done
    done
done

# one_run BACKEND N PROG ARGS…: a line of its own, `ok` or the log's first error
one_run() {
    local backend=$1 n=$2 prog=$3 log
    shift 3
    log="$WORK/$(basename "$prog" .strata)-$backend-$n.log"
    # DEVICE (bench/common.sh) picks the OpenCL device; the CUDA backend takes its first
    [ "$backend" = opencl ] && [ -n "${DEVICE:-}" ] && [[ $DEVICE != cuda* ]] && set -- "$@" --device "$DEVICE"
    if timeout 600 "$STRATA" run "$prog" --size "N=$n" "$@" --backend "$backend" --check -v >"$log" 2>&1 &&
        grep -q '^check: the results equal' "$log"; then
        printf '%-6s %8s %-40s ok\n' "$backend" "$n" "$prog"
    else
        printf '%-6s %8s %-40s FAILED: %s\n' "$backend" "$n" "$prog" \
            "$(grep -m1 -E 'error|differ|check:' "$log" || tail -1 "$log")"
    fi
}
export -f one_run
export STRATA WORK DEVICE

printf '%s\n' "${jobs[@]}" | xargs -P "$JOBS" -I{} bash -c 'one_run $1' _ {} | sort -k3,3 -k1,1 -k2,2n |
    tee "$WORK/summary.txt"
runs=$(wc -l <"$WORK/summary.txt")
failed=$(grep -c FAILED "$WORK/summary.txt" || true)
echo "$runs runs on $(device_name_of examples/prefix_sum.strata --size N=1): $failed failed (logs in $WORK)"
[ "$failed" -eq 0 ]
