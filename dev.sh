#!/usr/bin/env bash
# dev.sh — set up, build and run strata on a Debian machine.
#
#   ./dev.sh demo    install what is missing, build, run every example on OpenCL,
#                    then explore [Pizzuti et al. 2022]'s BS x SE scan space and export the best
#   ./dev.sh test    install what is missing, build, run every test suite
#                    plainly and again under AddressSanitizer + UBSan
#   ./dev.sh build   install what is missing and build (build/strata)
#   ./dev.sh autotune PROG --space SPACE --out DIR [--sampler tpe|cmaes|random] [--trials N] …
#                    search a space too large to enumerate (explore/autotune.py --help)
#
# Packages come from apt-get (as root, or through sudo); the autotuner's
# optuna from the Python package index into the project's virtual
# environment, .venv (explore/requirements.txt), made by this script.
set -euo pipefail
cd "$(dirname "$0")"

# clang and libclang-rt-dev (libFuzzer, only recommended by clang, which
# --no-install-recommends leaves out) build the fuzzers of `meson test`'s
# fuzz suite (tests/fuzz_*.c); postgresql, the server the cluster-postgres suite
# starts for two autotune workers (docs/cluster.md)
PACKAGES=(gcc ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libtcc-dev check meson ninja-build
          pkg-config python3 python3-venv clang libclang-rt-dev postgresql)

say() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

ensure_packages() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "dev.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
        sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() { # build DIR [meson options]; quiet unless something fails
    local dir=$1 log
    shift
    log=$(mktemp)
    # an existing folder takes the options too (meson configure), so that a
    # changed option here reaches builds made before it
    if ! { if [ -f "$dir/build.ninja" ]; then [ $# -eq 0 ] || meson configure "$dir" "$@"
           else meson setup "$dir" "$@"; fi; } >"$log" 2>&1 ||
       ! meson compile -C "$dir" >>"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "dev.sh: building $dir failed" >&2
        exit 1
    fi
    rm -f "$log"
}

# .venv with the autotuner's requirements, made or brought up to date
ensure_venv() {
    if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import optuna' 2>/dev/null ||
       [ explore/requirements.txt -nt .venv/.requirements ]; then
        say "making the autotuner's virtual environment (.venv: optuna)"
        python3 -m venv .venv
        .venv/bin/pip install --quiet --disable-pip-version-check -r explore/requirements.txt
        touch .venv/.requirements
    fi
}

demo() {
    ensure_packages
    build build
    local strata=build/strata
    STRATA=$strata
    . bench/common.sh
    say "the OpenCL devices"
    $strata devices
    say "every example, generated for OpenCL and checked against the interpreter"
    for prog in examples/*.strata; do
        local sizes=(--size N=1000000)
        case $prog in
            # 32 turns each: the interpreter's check at 10^6 would take most of a minute
            *radix_sort*) sizes=(--size N=100000) ;;
            *block_sums*) sizes=(--size N=1048576) ;;
        esac
        # shellcheck disable=SC2207
        sizes+=($(example_args "$prog"))
        printf '%-36s ' "$prog"
        $strata run "$prog" "${sizes[@]}" --check 2>&1 >/dev/null | grep -E '^check|error' || true
    done
    local n=4194304
    say "the paper's space: BS x SE for a 2^22 f32 prefix sum on the default device"
    # resumable: run again and finished points are not redone (rm -rf out/ for a fresh one);
    # an exploration made by another build of strata, which refuses to resume it
    # (its kernels and timings are not this build's), is made again
    local build d
    build=$($strata --version | sed -n 's/.*(build \(.*\))$/\1/p')
    for d in out/prefix_sum-paper out/prefix_sum-lookback; do
        if [ -f "$d/explore.json" ] && ! grep -qF "\"strata\": \"$build\"" "$d/explore.json"; then
            say "$d was explored by another build of strata: exploring it again"
            rm -rf "$d"
        fi
    done
    $strata explore examples/prefix_sum.strata --size N=$n --out out/prefix_sum-paper \
        --space 'parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])'
    say "the look-back scan's space, shaped for CPUs (WG=1, direct) and GPUs (WG=256, local)"
    $strata explore examples/prefix_sum.strata --size N=$n --out out/prefix_sum-lookback \
        --space 'lookback(M=[12, 4096, 16384], WG=[1, 256], LOAD=[local, direct]) where M * WG <= 16384'
    headline $n
    say "what users write around the scan (a copy, saxpy, a sum, a u8 histogram, a filter), 2^22 elements,"
    say "beside hand-written OpenMP and Thrust's OpenMP backend on every core (bench/primitives.sh, one round)"
    N=$n WORK=out/bench-primitives bench/primitives.sh 1 2>/dev/null | sed -n '/^| program/,$p'
}

# The headline: each space's best beside a copy of the same bytes, as
# ratios, and the faster exported (strata run without -s uses it).
headline() {
    local n=$1 paper lookback copy_ms
    paper=$(best_of out/prefix_sum-paper)
    lookback=$(best_of out/prefix_sum-lookback)
    mkdir -p out
    copy_program f32 out/copy.strata
    copy_ms=$(strata_ms out/copy.strata --size N=$n)
    say "2^22 f32 prefix sum: the best of each space beside a copy of the same bytes"
    for row in "the paper's space	$paper" "the look-back space	$lookback" "copy (map(x => x))	$copy_ms	"; do
        IFS=$'\t' read -r name ms strategy <<<"$row"
        [ -n "$ms" ] || { printf '  %-20s  none ran\n' "$name"; continue; }
        awk -v name="$name" -v ms="$ms" -v copy="$copy_ms" -v s="$strategy" 'BEGIN {
            printf "  %-20s %9.3f ms  %5.2fx copy  %s\n", name, ms, copy == "n/a" ? 0 : copy / ms, s }'
    done
    local winner=out/prefix_sum-paper
    if faster "$lookback" "$paper"; then
        winner=out/prefix_sum-lookback
    fi
    say "the faster space's best, measured again and exported (strata run without -s uses it)"
    $strata export "$winner" --into results
}

run_tests() {
    ensure_packages
    ensure_venv
    say "build and test"
    build build
    meson test -C build --print-errorlogs --num-processes "$(nproc)"
    say "build and test under AddressSanitizer and UndefinedBehaviorSanitizer"
    # optimised (-O2 -g): the checks are the same, and the interpreter the
    # tests check against runs twice as fast as at -O0. Not with helpers
    # called once inlined: under ASan their locals do not share stack slots,
    # so a recursive pass's frame grew to 15 KiB and the depth limit's tests
    # (ST_MAX_DEPTH levels) overflowed the stack
    build build-sanitize -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized \
        -Dc_args=-fno-inline-functions-called-once
    meson test -C build-sanitize --print-errorlogs --num-processes "$(nproc)" --no-suite fuzz
}

case "${1:-}" in
    demo) demo ;;
    test) run_tests ;;
    build) ensure_packages && build build && echo "built build/strata" ;;
    autotune)
        shift
        ensure_packages
        ensure_venv
        build build
        STRATA=build/strata exec .venv/bin/python explore/autotune.py "$@" ;;
    *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 1 ;;
esac
