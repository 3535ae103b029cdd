#!/usr/bin/env bash
# bench/autotune-vs-exhaustive.sh — the autotuner's samplers against the
# exhaustive driver, on [Pizzuti et al. 2022]'s BS x SE space (25 points) for a prefix
# sum, in one run on one device.
#
#   bench/autotune-vs-exhaustive.sh [N] [TRIALS] [SEEDS]
#     N       the prefix sum's length (default 4194304, as ./dev.sh demo)
#     TRIALS  evaluations per study (default 10)
#     SEEDS   studies per sampler, seeded 1..SEEDS (default 3)
#   SPACE='…' in the environment explores another space of the prefix sum
#   (default the paper's), WORK=DIR puts everything elsewhere.
#
# First `strata explore` measures every point. Then each sampler (tpe,
# cmaes, random) runs SEEDS studies of TRIALS evaluations with
# explore/autotune.py. For each study the table gives:
#   - the point the study found best;
#   - the trial at which the study first evaluated that point;
#   - how many distinct points it evaluated;
#   - the quality of the point: the exhaustive best's median over the
#     found point's median, both as measured by the exhaustive run, so that
#     timing noise between runs does not count.
# Quality 1.000 means the study found the exhaustive best. Everything goes
# to $WORK (out/bench-autotune/), the table is printed.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${1:-4194304}
TRIALS=${2:-10}
SEEDS=${3:-3}
SPACE=${SPACE:-'parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])'}
WORK=${WORK:-out/bench-autotune}
STRATA=build/strata

./dev.sh autotune --help >/dev/null # packages, build, .venv
rm -rf "$WORK"
mkdir -p "$WORK"

echo "exhaustive: $SPACE, N=$N" >&2
$STRATA explore examples/prefix_sum.strata --size "N=$N" --space "$SPACE" --out "$WORK/exhaustive" \
    --cache "$WORK/cache" >"$WORK/exhaustive.log" 2>&1

# the exhaustive run's ok points as "point<TAB>median_ms<TAB>strategy", from its records
sed -n 's/^{"point": \([0-9]*\), "strategy": "\([^"]*\)", .*"status": "ok".*"median_ms": \([0-9.eE+-]*\),.*/\1\t\3\t\2/p' \
    "$WORK/exhaustive/results.jsonl" >"$WORK/exhaustive.tsv"
median_of() { awk -F'\t' -v p="$1" '$1 == p { print $2 }' "$WORK/exhaustive.tsv"; }
strategy_of() { awk -F'\t' -v p="$1" '$1 == p { print $3 }' "$WORK/exhaustive.tsv"; }
best_point=$(sort -t$'\t' -k2,2g "$WORK/exhaustive.tsv" | head -1 | cut -f1)
best_ms=$(median_of "$best_point")
best_strategy=$(strategy_of "$best_point")

# a field of autotune.json (written with one key per line)
field() { grep -m1 "\"$2\":" "$1" | sed 's/.*": *//; s/[",]//g'; }

rows=()
for sampler in tpe cmaes random; do
    for seed in $(seq 1 "$SEEDS"); do
        dir="$WORK/$sampler-$seed"
        echo "autotune: $sampler, seed $seed, $TRIALS trials" >&2
        ./dev.sh autotune examples/prefix_sum.strata --size "N=$N" --space "$SPACE" --out "$dir" \
            --sampler "$sampler" --sampler-seed "$seed" --trials "$TRIALS" --cache "$WORK/cache" \
            >"$dir.log" 2>&1 || { cat "$dir.log" >&2; exit 1; }
        point=$(field "$dir/autotune.json" point)
        first=$(field "$dir/autotune.json" first_trial)
        distinct=$(grep -o '"point": [0-9]*' "$dir/autotune.json" | sort -u | wc -l)
        found_ms=$(median_of "$point")
        quality=$(awk -v b="$best_ms" -v f="$found_ms" 'BEGIN { printf "%.3f", b / f }')
        strategy=$(strategy_of "$point")
        rows+=("$(printf '| %s | %s | `%s` | %s | %s | %s |' "$sampler" "$seed" "$strategy" "$first" "$distinct" \
            "$quality")")
        echo "$sampler $quality $first" >>"$WORK/qualities"
    done
done

echo
echo "prefix sum, N=$N, on $($STRATA devices | sed -n 's/^  device 0: //p' | head -1)"
printf 'space: %s\nexhaustive best: %s, median %.3f ms (%s points ran correctly)\n' "$SPACE" "$best_strategy" \
    "$best_ms" "$(wc -l <"$WORK/exhaustive.tsv")"
echo
echo "| sampler | seed | found | at trial | distinct points | quality |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "| sampler | mean quality | mean trial of the find | studies |"
echo "|---|---|---|---|"
awk '{ q[$1] += $2; t[$1] += $3; n[$1]++ } END { for (s in q) printf "| %s | %.3f | %.1f | %d |\n", s, q[s] / n[s], t[s] / n[s], n[s] }' \
    "$WORK/qualities" | sort
