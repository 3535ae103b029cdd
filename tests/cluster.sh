#!/usr/bin/env bash
# tests/cluster.sh — tuning beyond one machine, each worker a process of its
# own as on a cluster (docs/cluster.md):
#
#   tests/cluster.sh slurm     explore/cluster/explore-array.sbatch run as the
#                              three tasks of an array (SLURM_ARRAY_* set by
#                              hand, all at once), merged and exported by
#                              merge-export.sh: the merged exploration holds
#                              every point of the space once, with the statuses
#                              an exploration of the whole space gives
#   tests/cluster.sh postgres  two autotune workers sharing one optuna study on a
#                              real PostgreSQL server (started here on loopback,
#                              on a free port, in a temporary folder, stopped at
#                              the end); one is killed with SIGKILL mid-trial. The
#                              study holds the union of their trials, no point is
#                              evaluated twice unless its trial failed, and the
#                              killed worker's trial is tried again. Skipped (77)
#                              without PostgreSQL's server or psycopg in .venv
#                              (./dev.sh test installs both).
#
# STRATA, STRATA_EXAMPLES, STRATA_PYTHON and STRATA_AUTOTUNE come from meson test.
set -u
mode=${1:?slurm or postgres}
: "${STRATA:?run through meson test}" "${STRATA_EXAMPLES:?run through meson test}"
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/strata-cluster-XXXXXX)
chmod 755 "$work" # the PostgreSQL server runs as another user when we are root
cleanup() { :; }
trap 'cleanup; rm -rf "$work"' EXIT
fail() {
    echo "cluster: $*" >&2
    exit 1
}
prog=$STRATA_EXAMPLES/prefix_sum.strata
space='parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])' # 25 points, some refused by their constraint

# "point status" per line of an exploration's records, sorted
points_of() {
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(r["point"], r["status"])' "$1/results.jsonl" | sort -n
}

if [ "$mode" = slurm ]; then
    export PROG=$prog SPACE=$space OUT=$work/shards SIZE=N=3001 STRATA_CACHE=$work/cache RESULTS=$work/results
    # three tasks of an array --array=1-3, at once, as Slurm starts them
    pids=()
    for task in 1 2 3; do
        SLURM_ARRAY_TASK_ID=$task SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 \
            bash "$here/explore/cluster/explore-array.sbatch" >"$work/task-$task.log" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p" || fail "an array task failed: $(cat "$work"/task-*.log)"
    done
    for s in 0 1 2; do
        [ -f "$OUT/shard-$s/results.jsonl" ] || fail "no shard $s: $(cat "$work"/task-*.log)"
        # shard s holds the points whose index % 3 == s, and only those
        points_of "$OUT/shard-$s" | awk -v s=$s '$1 % 3 != s { print "point " $1 " in shard " s; bad = 1 } END { exit bad }' ||
            fail "shard $s holds another shard's point"
    done
    # a task outside the array's range is refused, saying why
    if SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_COUNT=3 bash "$here/explore/cluster/explore-array.sbatch" 2>"$work/out-of-range.log"; then
        fail "task 7 of an array of 3 ran"
    fi
    grep -q "is not one of the 3 tasks" "$work/out-of-range.log" || fail "task 7 of 3: $(cat "$work/out-of-range.log")"
    # merged and exported as the job after the array would
    bash "$here/explore/cluster/merge-export.sh" >"$work/merge.log" 2>&1 || fail "merge-export: $(cat "$work/merge.log")"
    [ -f "$RESULTS/index.json" ] || fail "merge-export exported nothing: $(cat "$work/merge.log")"
    # the same space explored whole, in one process: the same points, the same statuses
    "$STRATA" explore "$prog" --space "$space" --size N=3001 --cache "$STRATA_CACHE" --out "$work/whole" >"$work/whole.log" 2>&1 ||
        fail "the whole exploration failed: $(cat "$work/whole.log")"
    diff <(points_of "$OUT/merged") <(points_of "$work/whole") >"$work/diff" ||
        fail "the merged shards differ from the whole space: $(cat "$work/diff")"
    [ "$(points_of "$OUT/merged" | wc -l)" -eq 25 ] || fail "the merged exploration does not hold the 25 points"
    echo "cluster: 3 array tasks, merged: the 25 points once each, as one exploration of the whole space gives them"
    exit 0
fi

[ "$mode" = postgres ] || fail "no mode $mode (slurm or postgres)"
py=${STRATA_PYTHON:?run through meson test}
"$py" -c 'import optuna, psycopg' 2>/dev/null || { echo "cluster: no optuna and psycopg in .venv (./dev.sh test makes it): skipped" >&2; exit 77; }
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "cluster: no PostgreSQL server here (Debian's postgresql): skipped" >&2; exit 77; }
# PostgreSQL refuses to run as root: as root, its own user runs it
as=()
if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || fail "running as root, and there is no postgres user to run the server as"
    as=(runuser -u postgres --)
fi
db=$work/db
mkdir -p "$db" && chmod 700 "$db"
[ ${#as[@]} -eq 0 ] || chown postgres "$db"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${as[@]}" "$bin/initdb" -D "$db/data" -U strata -A trust --no-sync -E UTF8 >"$work/initdb.log" 2>&1 ||
    fail "initdb: $(cat "$work/initdb.log")"
cleanup() { "${as[@]}" "$bin/pg_ctl" -D "$db/data" -m immediate stop >/dev/null 2>&1; }
"${as[@]}" "$bin/pg_ctl" -D "$db/data" -w -t 60 -l "$db/server.log" \
    -o "-p $port -k $db -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null ||
    fail "the server did not start: $(cat "$db/server.log")"
"$bin/createdb" -h 127.0.0.1 -p "$port" -U strata study || fail "createdb failed"
url="postgresql://strata@127.0.0.1:$port/study"

# Two workers, random points (so they draw some of the same), 16 trials in
# the study; a trial times 150 runs, so that it lasts long enough to be
# killed in. A heartbeat every second: the killed worker's trial is failed
# two seconds after its last beat.
worker() { # NAME SEED
    exec "$py" "$STRATA_AUTOTUNE" "$prog" --space "$space" --size N=65536 --runs 150 --cache "$work/cache" \
        --out "$work/$1" --storage "$url" --sampler random --sampler-seed "$2" --trials 16 --heartbeat 1 --strata "$STRATA"
}
(worker w1 1) >"$work/w1.log" 2>&1 &
w1=$!
(worker w2 2) >"$work/w2.log" 2>&1 &
w2=$!
# kill w1 in the middle of a trial after its second: its strata marks the
# point it is evaluating (serve-evaluating) while it does
for _ in $(seq 1200); do
    [ "$(grep -c '^\[' "$work/w1.log")" -ge 2 ] && [ -e "$work/w1/serve-evaluating" ] && break
    kill -0 $w1 2>/dev/null || break
    sleep 0.05
done
kill -9 $w1 2>/dev/null || fail "w1 ended before it could be killed: $(cat "$work/w1.log")"
wait $w1 2>/dev/null
wait $w2 || fail "the surviving worker failed: $(cat "$work/w2.log")"

# What the study holds, as optuna reads it back from the server.
"$py" - "$url" "$work" <<'PY' || fail "the study is not what two workers should leave (logs: $(cat "$work/w1.log" "$work/w2.log"))"
import json, os, sys
import optuna
from optuna.trial import TrialState
url, work = sys.argv[1].replace("postgresql://", "postgresql+psycopg://"), sys.argv[2]
trials = optuna.load_study(study_name="strata", storage=url).get_trials(deepcopy=False)
complete = [t for t in trials if t.state == TrialState.COMPLETE]
failed = [t for t in trials if t.state == TrialState.FAIL]
def lines(name):  # the trial lines a worker printed: one per trial it finished
    return sum(1 for l in open(os.path.join(work, name + ".log")) if l.startswith("["))
def points(name):  # the points a worker's strata evaluated in the search
    path = os.path.join(work, name, "results.jsonl")
    evaluated = [json.loads(l)["point"] for l in open(path)] if os.path.exists(path) else []
    # a worker that finished measured the study's best again in its own
    # folder, whichever worker first evaluated it: that record is not the search's
    summary = os.path.join(work, name, "autotune.json")
    if os.path.exists(summary):
        evaluated.remove(json.load(open(summary))["best"]["point"])
    return set(evaluated)
problems = []
# the union: every trial either worker finished is in the study, nothing else
if len(complete) != lines("w1") + lines("w2"):
    problems.append(f"{len(complete)} finished trials in the study, the workers printed {lines('w1')} + {lines('w2')}")
if len(complete) < 16:
    problems.append(f"the study has {len(complete)} finished trials, not the 16 asked for")
# the killed worker's trial: failed, and its point tried again and finished
if not failed:
    problems.append("no failed trial: the killed worker left none running")
for t in failed:
    again = [c for c in complete if c.params == t.params]
    if not again:
        problems.append(f"trial {t.number}'s point ({t.params}) was not tried again after its worker died")
# no point evaluated twice unless its trial failed: evaluated in both
# workers' folders, or by two finished trials that did not take another's result
failed_points = {t.user_attrs.get("point") for t in failed}
twice = (points("w1") & points("w2")) - failed_points
if twice:
    problems.append(f"points evaluated by both workers: {sorted(twice)}")
own = [t.user_attrs["point"] for t in complete if "reused_from" not in t.user_attrs]
dup = {p for p in own if own.count(p) > 1} - failed_points
if dup:
    problems.append(f"points evaluated by two trials: {sorted(dup)}")
reused = sum(1 for t in complete if "reused_from" in t.user_attrs)
for p in problems:
    print("cluster:", p, file=sys.stderr)
if problems:
    print("cluster: the study's trials:", file=sys.stderr)
    for t in trials:
        print(f"  {t.number}: {t.state.name} {t.params} {t.user_attrs} {t.system_attrs}", file=sys.stderr)
if not problems:
    print(f"cluster: {len(complete)} trials from two workers ({reused} took another's result), "
          f"{len(failed)} failed with the killed worker and tried again")
sys.exit(1 if problems else 0)
PY
# the two workers' folders merge into one exploration
"$STRATA" merge "$work/w1" "$work/w2" --out "$work/merged" >"$work/merge.log" 2>&1 || fail "merge: $(cat "$work/merge.log")"
echo "cluster: merged: $(points_of "$work/merged" | wc -l) points"
