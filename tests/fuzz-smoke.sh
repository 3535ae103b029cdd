#!/usr/bin/env bash
# Run a libFuzzer target for a few seconds from a seed corpus, in a scratch
# folder (libFuzzer adds what it finds to its first corpus directory).
# usage: fuzz-smoke.sh FUZZER SECONDS SEED_FILE...
set -euo pipefail
fuzzer=$(realpath "$1") seconds=$2
shift 2
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for seed in "$@"; do cp "$seed" "$corpus/"; done
cd "$corpus"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$corpus"
