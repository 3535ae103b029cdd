#!/usr/bin/env bash
# Run a libFuzzer target for a few seconds from a seed corpus, in a scratch
# folder (libFuzzer adds what it finds to its first corpus directory).
# Arguments starting with - (a -dict=FILE, say) go to libFuzzer.
# usage: fuzz-smoke.sh FUZZER SECONDS [-FLAG…] SEED_FILE...
set -euo pipefail
fuzzer=$(realpath "$1") seconds=$2
shift 2
flags=()
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do flags+=("$1"); shift; done
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for seed in "$@"; do cp "$seed" "$corpus/"; done
cd "$corpus"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 ${flags[@]+"${flags[@]}"} "$corpus"
