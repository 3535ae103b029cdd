#!/usr/bin/env bash
# Run a libFuzzer target for a few seconds from a seed corpus, in a scratch
# folder (libFuzzer adds what it finds to its first corpus directory), and
# remove the folder after. Arguments starting with - (a -dict=FILE, say) go
# to libFuzzer. The targets that read files write them under
# STRATA_FUZZ_SCRATCH (tests/fuzz_scratch.h): in memory where /dev/shm is.
# usage: fuzz-smoke.sh FUZZER SECONDS [-FLAG…] SEED_FILE...
# STRATA_FUZZ_SECONDS=S in the environment runs each for S seconds instead.
set -euo pipefail
fuzzer=$(realpath "$1") seconds=${STRATA_FUZZ_SECONDS:-$2}
shift 2
flags=()
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do flags+=("$1"); shift; done
corpus=$(mktemp -d)
scratch=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$corpus" "$scratch"' EXIT
for seed in "$@"; do cp "$seed" "$corpus/"; done
cd "$corpus"
# not exec: the trap removes both folders once the fuzzer is done
STRATA_FUZZ_SCRATCH=$scratch "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    ${flags[@]+"${flags[@]}"} "$corpus"
