#!/usr/bin/env python3
"""strata's autotuner: a search over a space too large to enumerate.

The space is written as for `strata explore` (ranges, `where` constraints).
optuna proposes points: TPE, CMA-ES, or random as a baseline. One long-lived
`strata explore --serve` process per device evaluates them. It builds each
point, checks it against the interpreter and times it, each in a child
process, exactly as the driver does. It answers with one JSON line per point
and records the point in the exploration's directory.

The directory ends like the driver's: explore.json, results.jsonl,
results.csv, results.svg. So `strata export DIR` exports the best variant.

The study lives in SQLite in that directory by default, so running the same
command again continues an interrupted study. Any database URL optuna
accepts (--storage) lets several workers tune one study: one per device or
machine, each with its own directory, joined afterwards with `strata merge`
(docs/cluster.md). `postgresql://` URLs go through psycopg (3), in .venv.
Workers of one study share its work:
  - --trials counts the study's finished trials, all workers together;
  - a point some worker has finished is not evaluated again: a trial that
    draws it takes that trial's result (and a trial that draws a point
    another is evaluating waits for it);
  - every worker beats a heartbeat into the storage; a trial whose worker
    stopped beating (killed, its machine gone) is failed by the others
    after a grace period and its point tried again, once at least.

    ./dev.sh autotune examples/prefix_sum.strata --size N=4194304 \\
        --space 'parallel-scan(BS=[32..512 pow2], BF=2, SE=[1..16 pow2])' \\
        --out out/prefix_sum-tpe --sampler tpe --trials 12

The protocol with `strata explore --serve` is one JSON object per line:
  strata says first  {"strata_serve": 1, "device": …, "points": N, "dims": [{"name": "BS", "values": [32, …]}, …]}
  we send            {"point": P}                     evaluate P (its record, if it has one already)
                     {"point": P, "again": true}      measure P again (the record is replaced)
  strata answers     {"recorded": bool, "record": {"point": P, "strategy": …, "status": …, "median_ms": …,
                                                  "samples_ms": […], …}}  or  {"error": …}
Points are numbered in mixed radix over the dimensions, the last fastest.
A client names points only: statuses and times are strata's. When a strata
dies evaluating P, the next one started on the directory records P as
`crash` itself, so asking for P again answers with that record.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

try:
    import optuna
except ImportError:  # the project's virtual environment has it: ./dev.sh autotune …
    sys.exit("autotune: optuna is not installed here; run it as `./dev.sh autotune …`, "
             "which makes the project's virtual environment (.venv) with it")

# What a point that did not run correctly scores. Rank-based samplers (TPE,
# CMA-ES) only need it to be worse than every real time, in milliseconds.
PENALTY_MS = 1e9
# Restarts of a strata process that keeps dying before we give up.
MAX_RESTARTS = 5
# How often a worker polls for a point another worker is evaluating.
WAIT_POLL_S = 0.5


class StrataDied(Exception):
    """The serving strata process ended (crashed or was killed)."""


class Server:
    """One `strata explore --serve` process: points in, records out."""

    def __init__(self, command):
        self.command = command
        self.proc = None
        self.hello = None
        self.start()

    def start(self):
        # stderr is ours: strata's messages reach the user as they are
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            raise SystemExit(f"autotune: strata stopped before serving (exit status {code}); "
                             "its message is above")
        self.hello = json.loads(line)
        if self.hello.get("strata_serve") != 1:
            raise SystemExit(f"autotune: strata answered something else than a serve greeting: {line.strip()}")

    def exit_text(self):
        code = self.proc.wait()
        return f"killed by signal {-code}" if code < 0 else f"exit status {code}"

    def ask(self, request):
        """Send one request, return the answer; StrataDied if the process ends."""
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            raise StrataDied(self.exit_text())
        answer = json.loads(line)
        if "error" in answer:
            raise SystemExit(f"autotune: strata refused {json.dumps(request)}: {answer['error']}")
        return answer

    def close(self):
        """End of input: strata writes results.csv and results.svg and its summary."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            return self.proc.wait()
        return self.proc.returncode


class Space:
    """The dimensions strata announced, and the point numbering."""

    def __init__(self, hello):
        self.dims = hello["dims"]
        self.npoints = hello["points"]

    def suggest(self, trial):
        """One value index per dimension. Numbers are ordered, so they are
        integers for CMA-ES to move along; names are categories."""
        which = []
        for d in self.dims:
            values = d["values"]
            if all(isinstance(v, (int, float)) for v in values):
                which.append(trial.suggest_int(d["name"], 0, len(values) - 1))
            else:
                which.append(values.index(trial.suggest_categorical(d["name"], values)))
        return which

    def point(self, which):
        p = 0
        for d, w in zip(self.dims, which):
            p = p * len(d["values"]) + w
        return p


def sampler_of(name, seed, startup):
    """startup: the random points a model-based sampler begins with."""
    if name == "tpe":
        # multivariate: the dimensions of a strategy interact (BS with SE)
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup, multivariate=True)
    if name == "cmaes":
        # CMA-ES over the value indices
        return optuna.samplers.CmaEsSampler(seed=seed, n_startup_trials=startup, warn_independent_sampling=False)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise SystemExit(f"autotune: no sampler `{name}` (tpe, cmaes or random)")


def storage_of(url, heartbeat):
    """optuna's storage for a URL: a database with heartbeats, so that the
    trial of a worker that died is failed and its point tried again; or, for
    `journal:PATH`, a journal file that workers sharing a file system append
    to (no server; no heartbeats: a dead worker's trial stays running)."""
    if url.startswith("journal:"):
        backend = optuna.storages.journal.JournalFileBackend(url[len("journal:"):])
        return optuna.storages.JournalStorage(backend)
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):  # SQLAlchemy's default driver is psycopg2; .venv has psycopg 3
            url = "postgresql+psycopg://" + url[len(plain):]
    import sqlalchemy.exc  # optuna's own dependency
    with warnings.catch_warnings():  # heartbeats are "experimental" in optuna 5
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        retry = optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=3)
        # Workers started at once on an empty database each create its tables;
        # one wins, the others fail on its types or keys and find them made.
        for attempt in range(5):
            try:
                return optuna.storages.RDBStorage(url, heartbeat_interval=heartbeat, grace_period=2 * heartbeat,
                                                  heartbeat_stale_trial_callback=retry)
            except sqlalchemy.exc.DBAPIError:
                if attempt == 4:
                    raise
                time.sleep(0.5 + attempt)


def settled_by_another(study, trial, p):
    """A trial of the study, other than this one, that has or will have p's
    result: one finished, else one with a lower number still running (of two
    workers that draw one point at once, the later trial waits)."""
    running = None
    for t in study.get_trials(deepcopy=False):
        if t.number == trial.number or t.user_attrs.get("point") != p:
            continue
        if t.state == optuna.trial.TrialState.COMPLETE:
            return t
        if t.state == optuna.trial.TrialState.RUNNING and t.number < trial.number:
            running = t
    return running


def strata_command(a):
    cmd = [a.strata, "explore", a.program, "--space", a.space, "--out", a.out, "--serve"]
    for s in a.size:
        cmd += ["--size", s]
    for i in a.input:
        cmd += ["--input", i]
    for p in a.plugin:
        cmd += ["--plugin", p]
    for flag, value in (("--seed", a.seed), ("--device", a.device), ("--runs", a.runs),
                        ("--timeout", a.timeout), ("--cache", a.cache), ("--entry", a.entry)):
        if value is not None:
            cmd += [flag, str(value)]
    return cmd


def show(n, total, record, note=""):
    status = record["status"]
    figures = f"{record['median_ms']:9.4f} ms {record['gb_per_s']:8.3f} GB/s" if status == "ok" else " " * 29
    print(f"[{n}/{total}] {status:<12} {figures}  {record['strategy']}{note}", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="autotune",
        description="Search a space of strategies with optuna; points are evaluated by `strata explore --serve`.")
    ap.add_argument("program", metavar="PROG")
    ap.add_argument("--space", required=True, help="as for `strata explore`, ranges and `where` included")
    ap.add_argument("--out", required=True, metavar="DIR",
                    help="the exploration's directory (the driver's files); the study's database too by default")
    ap.add_argument("--sampler", default="tpe", help="tpe (default), cmaes or random")
    ap.add_argument("--trials", type=int, default=None, metavar="N",
                    help="evaluations in the whole study, earlier runs included (default 50 without --minutes)")
    ap.add_argument("--minutes", type=float, default=None, metavar="M", help="stop after M minutes of this run")
    ap.add_argument("--storage", default=None, metavar="URL",
                    help="optuna's storage URL (default sqlite:///DIR/study.db); a shared database "
                         "(postgresql://USER@HOST:PORT/DB) lets several workers tune one study; journal:PATH is a "
                         "journal file on a shared file system, without a server")
    ap.add_argument("--heartbeat", type=int, default=30, metavar="S",
                    help="seconds between a worker's heartbeats into a database storage; a trial whose worker "
                         "missed two is failed by another worker and its point tried again (default 30)")
    ap.add_argument("--study", default="strata", metavar="NAME", help="the study's name in the storage")
    ap.add_argument("--sampler-seed", type=int, default=None, metavar="S", help="seed the sampler (repeatable runs)")
    ap.add_argument("--startup", type=int, default=None, metavar="K",
                    help="random points before TPE or CMA-ES model the space (default: a fifth of --trials, 3 to 10)")
    ap.add_argument("--size", action="append", default=[], metavar="N=VALUE")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--plugin", action="append", default=[], metavar="PATH.so")
    ap.add_argument("--seed", type=int, default=None, help="the seed of generated inputs")
    ap.add_argument("--device", default=None, metavar="D")
    ap.add_argument("--runs", type=int, default=None, metavar="K")
    ap.add_argument("--timeout", type=int, default=None, metavar="SECONDS")
    ap.add_argument("--cache", default=None, metavar="DIR")
    ap.add_argument("--entry", default=None, metavar="NAME")
    ap.add_argument("--strata", default=os.environ.get("STRATA", "strata"), metavar="PATH",
                    help="the strata executable (default $STRATA, else strata on the PATH)")
    a = ap.parse_args(argv)
    if a.trials is None and a.minutes is None:
        a.trials = 50
    if a.trials is not None and a.trials < 1:
        ap.error("--trials must be at least 1")
    if a.minutes is not None and not a.minutes > 0:
        ap.error("--minutes must be above 0")
    if a.startup is None:
        a.startup = 10 if a.trials is None else min(10, max(3, a.trials // 5))
    if a.startup < 1:
        ap.error("--startup must be at least 1")
    if a.heartbeat < 1:
        ap.error("--heartbeat must be at least 1")
    sampler = sampler_of(a.sampler, a.sampler_seed, a.startup)

    server = Server(strata_command(a))
    space = Space(server.hello)
    storage = a.storage or f"sqlite:///{os.path.abspath(os.path.join(a.out, 'study.db'))}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=a.study, storage=storage_of(storage, a.heartbeat), sampler=sampler,
                                direction="minimize", load_if_exists=True)
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    remaining = None if a.trials is None else max(0, a.trials - len(done))
    total = a.trials if a.trials is not None else "?"
    print(f"autotune: {space.npoints} points on {server.hello['device']}; sampler {a.sampler}; "
          f"study `{a.study}` in {storage}" + (f", resumed with {len(done)} trials" if done else ""), flush=True)

    restarts = 0

    def evaluate(request):
        """Ask the server, restarting it when it dies: the new one records the point it died
        evaluating as a crash, and answers for it from that record."""
        nonlocal restarts
        try:
            answer = server.ask(request)
            restarts = 0
            return answer
        except StrataDied as died:
            restarts += 1
            if restarts > MAX_RESTARTS:
                raise SystemExit(f"autotune: strata died {restarts} times in a row; the last: {died}")
            print(f"autotune: the strata process died ({died}) evaluating point {request['point']}; "
                  "starting another, which records the point as a crash if it died evaluating it",
                  file=sys.stderr, flush=True)
            server.start()
            return server.ask({"point": request["point"]})

    def objective(trial):
        p = space.point(space.suggest(trial))
        trial.set_user_attr("point", p)  # first: a worker that draws p after this waits for us
        other = settled_by_another(study, trial, p)
        while other is not None and other.state == optuna.trial.TrialState.RUNNING:
            time.sleep(WAIT_POLL_S)
            other = settled_by_another(study, trial, p)
        if other is not None:  # finished elsewhere: its result, not a second evaluation
            for key in ("strategy", "status", "gb_per_s"):
                if key in other.user_attrs:
                    trial.set_user_attr(key, other.user_attrs[key])
            trial.set_user_attr("reused_from", other.number)
            taken = {"status": other.user_attrs.get("status", "?"), "strategy": other.user_attrs.get("strategy", p),
                     "median_ms": other.value, "gb_per_s": other.user_attrs.get("gb_per_s", 0.0)}
            show(trial.number + 1, total, taken, f"  (trial {other.number + 1}'s)")
            return other.value
        answer = evaluate({"point": p})
        r = answer["record"]
        trial.set_user_attr("strategy", r["strategy"])
        trial.set_user_attr("status", r["status"])
        show(trial.number + 1, total, r, "  (recorded before)" if answer["recorded"] else "")
        if r["status"] != "ok":
            return PENALTY_MS
        trial.set_user_attr("gb_per_s", r["gb_per_s"])
        return r["median_ms"]

    started = time.monotonic()
    timeout = None if a.minutes is None else a.minutes * 60
    # --trials is the study's: every worker stops once the study has that many finished
    until = [] if a.trials is None else [optuna.study.MaxTrialsCallback(a.trials)]
    if remaining != 0:
        study.optimize(objective, timeout=timeout, callbacks=until)
        # the points of trials whose worker died, failed since and queued again: ours to finish
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            optuna.storages.fail_stale_trials(study)
        waiting = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
        if waiting:
            study.optimize(objective, n_trials=len(waiting), timeout=timeout)
    ok = [t for t in study.trials
          if t.state == optuna.trial.TrialState.COMPLETE and t.user_attrs.get("status") == "ok"]
    if not ok:
        server.close()
        print("best: none (no point ran correctly)")
        return 1
    best = min(ok, key=lambda t: t.value)
    first = min(t.number for t in ok if t.user_attrs["point"] == best.user_attrs["point"]) + 1
    # the best, measured again: its record replaces the one found while searching
    again = evaluate({"point": best.user_attrs["point"], "again": True})["record"]
    server.close()
    elapsed = time.monotonic() - started
    ntrials = len([t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE])
    print(f"best: {best.user_attrs['strategy']} (point {best.user_attrs['point']}, "
          f"first evaluated at trial {first} of {ntrials})")
    if again["status"] == "ok":
        print(f"      measured again: median {again['median_ms']:.4f} ms "
              f"(min {again['min_ms']:.4f}, max {again['max_ms']:.4f} over {len(again['samples_ms'])} runs), "
              f"{again['gb_per_s']:.3f} GB/s; in the search {best.value:.4f} ms")
    else:
        print(f"      measured again: {again['status']}: {again['message']}")
    summary = {"sampler": a.sampler, "study": a.study, "storage": storage, "trials": ntrials,
               "best": {"point": best.user_attrs["point"], "strategy": best.user_attrs["strategy"],
                        "median_ms": best.value, "first_trial": first, "again": again},
               "history": [{"trial": t.number + 1, "point": t.user_attrs.get("point"),
                            "status": t.user_attrs.get("status"),
                            "median_ms": t.value if t.user_attrs.get("status") == "ok" else None}
                           for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]}
    with open(os.path.join(a.out, "autotune.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(f"this run: {elapsed:.1f} s; records: {a.out}/results.jsonl, {a.out}/autotune.json")
    print(f"export: strata export {a.out} --into results" + "".join(f" --plugin {p}" for p in a.plugin))
    return 0 if again["status"] == "ok" else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit("autotune: interrupted; run the same command again to continue the study")
