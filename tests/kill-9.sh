#!/usr/bin/env bash
# tests/kill-9.sh — fault injection (issue 19's acceptance): `strata explore`
# and `strata export` killed with SIGKILL at random moments (a fixed seed),
# 20 times each. After every kill the files they keep must read back whole
# (explore.json; results.jsonl: complete lines, each a record, no point
# twice; index.json, record.json), what was recorded before the kill must
# still be there byte for byte, and the next run must complete.
#
#   tests/kill-9.sh STATE_CHECK   (STRATA and STRATA_EXAMPLES from meson test)
#
# A tiny program and space, and one build cache for every run, keep a
# trial under about a second and a half.
set -u
check=$1
: "${STRATA:?run through meson test}" "${STRATA_EXAMPLES:?run through meson test}"
trials=${KILL9_TRIALS:-20}
RANDOM=19 # the seed: the same moments on every run
work=$(mktemp -d /tmp/strata-kill9-XXXXXX)
trap 'rm -rf "$work"' EXIT

fail() {
    echo "kill-9: $*" >&2
    exit 1
}

space='parallel-scan(BS=[32, 64], BF=2, SE=[1, 2])' # 4 points
cp "$STRATA_EXAMPLES/prefix_sum.strata" "$work/tiny.strata"
cp "$STRATA_EXAMPLES/prefix_sum.strata" "$work/other.strata"
# exec: run in the background, $! is strata itself, not a shell around it
# (so each is called in a subshell, or in the background)
explore() { # PROGRAM OUT
    exec "$STRATA" explore "$1" --space "$space" --size N=3001 --runs 7 --jobs 1 --cache "$work/cache" --out "$2"
}
export_() { # DIR
    exec "$STRATA" export "$1" --into "$work/res" --top 1 --cache "$work/cache"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
sleep_ms() { sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }

# Run a command in the background and kill -9 it after a random delay of
# under $1 ms (it may have finished by then: a kill after the end is a
# trial too).
killed_at_random() {
    local max_ms=$1
    shift
    "$@" >"$work/killed.log" 2>&1 &
    local pid=$!
    sleep_ms $((RANDOM % max_ms))
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

# The same, the delay counted from the moment $1/results.jsonl holds a
# random number of records (0 to 3 of the 4), so that the kills fall
# before, between and while records are written however loaded the machine.
killed_among_records() {
    local out=$1
    shift
    "$@" >"$work/killed.log" 2>&1 &
    local pid=$! k=$((RANDOM % 4))
    while kill -0 "$pid" 2>/dev/null && [ "$(cat "$out/results.jsonl" 2>/dev/null | wc -l)" -lt "$k" ]; do
        sleep 0.005
    done
    sleep_ms $((RANDOM % 60))
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

# The records of $1 read back whole; their number on stdout.
records_whole() {
    [ -e "$1/results.jsonl" ] || { echo 0; return 0; }
    "$check" records "$1/results.jsonl" || fail "$1/results.jsonl does not read back whole"
}

# What $2 held before is still the start of $1/results.jsonl.
records_kept() {
    local before=$2 now=$1/results.jsonl
    [ -s "$before" ] || return 0
    cmp -s -n "$(stat -c %s "$before")" "$before" "$now" || fail "$now lost or changed a record written before the kill"
}

# nothing a write killed before its rename left (.NAME.XXXXXX) survives the
# next run, which holds the folder's lock
no_leftovers() {
    local left
    left=$(ls -A "$1" | grep -E '^\..+\.[A-Za-z0-9]{6}$' || true)
    [ -z "$left" ] || fail "$1 keeps what a killed write left: $left"
}

exploration_whole() {
    if [ -e "$1/explore.json" ]; then
        "$check" json "$1/explore.json" || fail "$1/explore.json does not read back"
        [ -s "$1/program.strata" ] || fail "$1 has an explore.json and no program.strata"
    elif [ -s "$1/results.jsonl" ]; then
        fail "$1 has records and no explore.json"
    fi
}

# ---- explore ----
cut=0 seen=
for t in $(seq 1 "$trials"); do
    out=$work/explored-$t
    killed_among_records "$out" explore "$work/tiny.strata" "$out"
    exploration_whole "$out"
    n=$(records_whole "$out") || exit 1
    [ "$n" -lt 4 ] && cut=$((cut + 1))
    seen="$seen $n"
    cp "$out/results.jsonl" "$work/before" 2>/dev/null || : >"$work/before"
    (explore "$work/tiny.strata" "$out") >"$work/next.log" 2>&1 || fail "explore after a kill failed: $(cat "$work/next.log")"
    exploration_whole "$out"
    n=$(records_whole "$out") || exit 1
    [ "$n" -eq 4 ] || fail "$out has $n records after the run that follows a kill, not 4"
    records_kept "$out" "$work/before"
    no_leftovers "$out"
done
echo "explore: $trials kills, $cut of them before the last record (records after each:$seen)"

# ---- export ----
(explore "$work/other.strata" "$work/other") >/dev/null 2>&1 || fail "exploring other.strata failed"
took=$(now_ms)
(export_ "$work/other") >/dev/null 2>&1 || fail "exporting other failed"
took=$(($(now_ms) - took + 1)) # the kills fall within the time an export takes
ex=$work/explored-1
cut=0
for t in $(seq 1 "$trials"); do
    killed_at_random "$took" export_ "$ex"
    "$check" index "$work/res/index.json" other || fail "after kill $t: index.json lost what was exported before"
    grep -q '^index: ' "$work/killed.log" || cut=$((cut + 1))
    for r in "$work"/res/*/*/record.json; do
        "$check" json "$r" || fail "after kill $t: $r does not read back"
        "$check" export "${r%/record.json}" || fail "after kill $t: ${r%/record.json} mixes two exports"
    done
    took=$(now_ms)
    (export_ "$ex") >"$work/next.log" 2>&1 || fail "export after a kill failed: $(cat "$work/next.log")"
    took=$(($(now_ms) - took + 1))
    "$check" index "$work/res/index.json" other tiny || fail "after the export that follows kill $t"
    no_leftovers "$work/res"
    for d in "$work"/res/*/; do no_leftovers "$d"; done
done
echo "export: $trials kills, $cut of them before it finished"
