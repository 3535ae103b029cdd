# bench/common.sh — what the benchmark scripts share; sourced, from the
# project's root, after the script has set its own variables.
#   DEVICE=D in the environment picks the device (as --device takes it);
#   TIMED_RUNS (default 15) is how many runs `strata_ms` takes the median of;
#   STRATA=PATH runs a strata built elsewhere, unbuilt here (a GPU machine
#   with no compiler packages: carry the binary); else build/strata, built.

# strata pins PoCL's worker threads one to a core (cli/cpu_pinning.c); the
# OpenMP peers' threads are pinned alike, unless the caller says otherwise.
export OMP_PROC_BIND=${OMP_PROC_BIND:-true}

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

# random_npy DESCR N FILE: N random 32-bit numbers (<i4 or <u4) as a .npy;
# random i32 are of both signs, so a filter of the positive ones keeps half
random_npy() {
    python3 - "$2" "$1" "$3" <<'PY'
import os, sys
n, descr, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, n)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(path, "wb") as out:
    out.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + os.urandom(4 * n))
PY
}

# nvidia_opencl: NVIDIA's OpenCL on a machine that has the driver but no ICD
# vendor file (a container that mounts the driver) lists no GPU: a folder of
# vendor files, the machine's and one naming NVIDIA's library, goes to the
# ICD loader as OCL_ICD_VENDORS (OCL_ICD_FILENAMES, tried on an H200, did
# not list it). Failing that, strata's CUDA backend: DEVICE=cuda. Does
# nothing when DEVICE is set or a GPU is listed.
nvidia_opencl() {
    local nv icd
    [ -z "${DEVICE:-}" ] || return 0
    "$STRATA" devices 2>/dev/null | grep -q '\[GPU\]' && return 0
    nv=$(ldconfig -p 2>/dev/null | sed -n 's/.*libnvidia-opencl\.so\.1 .*=> //p' | head -1)
    [ -n "$nv" ] || nv=$(find /usr/local/nvidia /usr/lib /usr/lib64 -name libnvidia-opencl.so.1 2>/dev/null | head -1 || true)
    if [ -n "$nv" ]; then
        icd=$(mktemp -d)
        cp /etc/OpenCL/vendors/*.icd "$icd/" 2>/dev/null || true
        echo "$nv" >"$icd/nvidia.icd"
        export OCL_ICD_VENDORS=$icd
        echo "no OpenCL GPU listed: NVIDIA's OpenCL library named to the ICD loader ($nv, OCL_ICD_VENDORS=$icd)" >&2
    fi
    if ! "$STRATA" devices 2>/dev/null | grep -q '\[GPU\]'; then
        echo "still no OpenCL GPU: strata's CUDA backend instead" >&2
        DEVICE=cuda
        device=(--device cuda)
    fi
}

# example_args PROG: what `strata run` needs for an example beyond its
# length N (the histograms' bucket count, the bit of a split, a loop's count)
example_args() {
    case $1 in
        *image_histogram*) ;;
        *histogram*) echo --input H=16 ;;
        *radix_step* | *split_by_bit*) echo --input B=3 ;;
        *loop_recurrence*) echo --input k=8 ;;
    esac
}
