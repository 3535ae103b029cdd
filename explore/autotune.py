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
  - every worker beats a heartbeat into the storage, a database's or a
    journal's alike; a trial whose worker stopped beating (killed, its
    machine gone) is failed by the others after a grace period (at once,
    when it ran on the same machine and its process is gone) and its
    point tried again, once at least; the last worker out watches the
    others' running trials for a grace period before it leaves. A trial that waits for a point another
    is evaluating watches that one's heartbeat while it waits: when it
    stops, the trial is failed and the waiting one evaluates the point
    itself (strata answers from its own record of the point, when it has
    one), so that no wait lasts forever.

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
# The system attribute a journal's heartbeat counts in.
BEAT = "strata_heartbeat"


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
        try:
            self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, bufsize=1)
        except OSError as e:
            raise SystemExit(f"autotune: cannot run strata ({self.command[0]}): {e.strerror}; build it "
                             "(./dev.sh build makes build/strata) and give its path with --strata or $STRATA")
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
        self.hello = hello
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

    def foreign_to(self, study):
        """Why the study is of another space, or None (then it is marked as
        this space's). Its points are numbered in its own space: taken for
        this one's, another worker's result would stand for another point.
        A study from before the mark is judged by its trials' parameters."""
        mine = self.hello["space"]
        theirs = study.user_attrs.get("strata_space")
        if theirs is not None:
            return None if theirs == mine else f"`{theirs}`"
        values = {d["name"]: d["values"] for d in self.dims}
        for t in study.get_trials(deepcopy=False):
            for name, dist in t.distributions.items():
                if name not in values:
                    return f"its trials have a parameter {name}, which this space has not"
                want = list(values[name]) if isinstance(dist, optuna.distributions.CategoricalDistribution) \
                    else (0, len(values[name]) - 1)
                have = list(dist.choices) if isinstance(dist, optuna.distributions.CategoricalDistribution) \
                    else (getattr(dist, "low", None), getattr(dist, "high", None))
                if want != have:
                    return f"its trials' {name} is not this space's"
        study.set_user_attr("strata_space", mine)
        return None


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


class JournalWithHeartbeat(optuna.storages.JournalStorage, optuna.storages._heartbeat.BaseHeartbeat):
    """optuna's journal file, with the heartbeats optuna gives databases
    only: without them a worker that died left its trial running, and a
    trial drawing that point waited for it forever. A beat is a count in
    the trial's system attributes, written every `interval` seconds while
    the trial runs. A trial is stale once this process has seen its count
    stand still for the grace period, timed by this process's own clock
    (the workers sharing a journal may be on machines whose clocks differ)."""

    def __init__(self, backend, interval, callback):
        super().__init__(backend)
        self._interval = interval
        self._grace = 2 * interval
        self._callback = callback
        self._beats = {}  # trial id: the beats this process wrote for it
        self._seen = {}  # trial id: (its count when last seen to change, time.monotonic() then)

    def record_heartbeat(self, trial_id):
        self._beats[trial_id] = self._beats.get(trial_id, 0) + 1
        try:
            self.set_trial_system_attr(trial_id, BEAT, self._beats[trial_id])
        except optuna.exceptions.UpdateFinishedTrialError:
            pass  # failed by another worker meanwhile: it has no heart to beat

    def _get_stale_trial_ids(self, study_id):
        now, stale = time.monotonic(), []
        for t in self.get_all_trials(study_id, deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
            beat, seen = t.system_attrs.get(BEAT), self._seen.get(t._trial_id)
            if seen is None or seen[0] != beat:
                self._seen[t._trial_id] = (beat, now)
            elif now - seen[1] > self._grace:
                stale.append(t._trial_id)
        return stale

    def get_heartbeat_interval(self):
        return self._interval

    def get_heartbeat_stale_trial_callback(self):
        return self._callback


def journal_damage(path):
    """What is wrong with a journal file, or None: each of its lines is one
    JSON object of optuna's, ended by a line break. A line cut short (its
    writer killed) or text that is not optuna's would make optuna fail
    later, in the middle of a study, with a traceback."""
    try:
        with open(path, "rb") as f:
            for number, line in enumerate(f, start=1):
                if not line.endswith(b"\n"):
                    return (f"its last line, line {number}, is cut short (a worker killed while it wrote?); "
                            "remove that line (everything after the last line break), or start another journal")
                try:
                    if not isinstance(json.loads(line), dict):
                        raise ValueError("not a JSON object")
                except ValueError as e:
                    return (f"line {number} is not a line of optuna's journal ({e}); the file was damaged or is "
                            "not a journal: give the path of a journal, or of a new file for a new study")
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"it cannot be read: {e.strerror}"
    return None


def storage_of(url, heartbeat):
    """optuna's storage for a URL, with heartbeats, so that the trial of a
    worker that died is failed and its point tried again: a database
    (SQLite, PostgreSQL: optuna's own heartbeats), or, for `journal:PATH`,
    a journal file that workers sharing a file system append to (no server;
    JournalWithHeartbeat's heartbeats). A URL that names nothing usable is
    refused, saying why, before anything starts."""
    with warnings.catch_warnings():  # heartbeats are "experimental" in optuna 5
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        retry = optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=3)
    if url.startswith("journal:"):
        path = url[len("journal:"):]
        folder = os.path.dirname(path) or "."
        if not path:
            raise SystemExit("autotune: --storage journal:PATH needs the journal file's path")
        if not os.path.isdir(folder):
            raise SystemExit(f"autotune: --storage {url}: the folder {folder} does not exist; make it "
                             f"(mkdir -p {folder}), or give a journal in a folder that does")
        damage = journal_damage(path)
        if damage:
            raise SystemExit(f"autotune: the journal {path} cannot be used: {damage}")
        try:
            backend = optuna.storages.journal.JournalFileBackend(path)
        except OSError as e:
            raise SystemExit(f"autotune: cannot open the journal {path}: {e.strerror}")
        return JournalWithHeartbeat(backend, heartbeat, retry)
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        folder = os.path.dirname(url[len("sqlite:///"):]) or "."
        if not os.path.isdir(folder):
            raise SystemExit(f"autotune: --storage {url}: the folder {folder} does not exist; make it "
                             f"(mkdir -p {folder}), or give a database in a folder that does")
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):  # SQLAlchemy's default driver is psycopg2; .venv has psycopg 3
            url = "postgresql+psycopg://" + url[len(plain):]
    import sqlalchemy.exc  # optuna's own dependency
    kinds = "sqlite:///PATH, postgresql://USER@HOST:PORT/DB or journal:PATH"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        # Workers started at once on an empty database each create its tables;
        # one wins, the others fail on its types or keys and find them made.
        for attempt in range(5):
            try:
                return optuna.storages.RDBStorage(url, heartbeat_interval=heartbeat, grace_period=2 * heartbeat,
                                                  heartbeat_stale_trial_callback=retry)
            except (sqlalchemy.exc.ArgumentError, sqlalchemy.exc.NoSuchModuleError, ValueError) as e:
                raise SystemExit(f"autotune: --storage {url}: not a storage autotune can use ({first_line(e)}); "
                                 f"give {kinds}")
            except ImportError as e:
                raise SystemExit(f"autotune: --storage {url}: its driver is not installed in .venv "
                                 f"({first_line(e)}); install it there (.venv/bin/pip install …)")
            except sqlalchemy.exc.DBAPIError as e:
                if attempt == 4:
                    raise SystemExit(f"autotune: cannot use the database {url}: {first_line(e.orig or e)}")
                time.sleep(0.5 + attempt)


def first_line(e):
    """An exception's message, its first line (a driver's can run to pages)."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


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


def wait_for_point(study, trial, p, me):
    """The trial that has p's result, once it has it, or None: p is this
    trial's to evaluate. While another trial evaluates p, its heartbeat is
    watched: fail_stale_trials fails it once its worker stopped beating
    (killed, its machine gone), here, where nobody else may be starting a
    trial to do it, and then p is this trial's; at once when that worker
    ran on this machine and its process is gone. So the wait ends."""
    other = settled_by_another(study, trial, p)
    lost = None
    while other is not None and other.state == optuna.trial.TrialState.RUNNING:
        time.sleep(WAIT_POLL_S)
        fail_lost(study, me)
        waited, other = other, settled_by_another(study, trial, p)
        if other is None or other.number != waited.number:
            lost = waited.number
    if lost is not None and (other is None or other.state != optuna.trial.TrialState.COMPLETE):
        print(f"autotune: trial {lost + 1}, which was evaluating point {p}, lost its worker (its heartbeat "
              f"stopped): it is failed, and trial {trial.number + 1} evaluates the point", file=sys.stderr,
              flush=True)
    return other


def this_worker():
    """Who runs a trial, as a user attribute: the kernel's boot and PID
    namespace on Linux (so a process elsewhere never looks like ours), and
    the process. Elsewhere None: only heartbeats tell."""
    try:
        boot = open("/proc/sys/kernel/random/boot_id").read().strip()
        return f"{boot}/{os.readlink('/proc/self/ns/pid')}/{os.getpid()}"
    except OSError:
        return None


def gone_here(worker, me):
    """Whether a trial's worker ran on this machine, in this PID namespace,
    and its process is gone (or a zombie): no heartbeat needs waiting for."""
    if not worker or not me or worker.rsplit("/", 1)[0] != me.rsplit("/", 1)[0]:
        return False
    pid = int(worker.rsplit("/", 1)[1])
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def fail_gone(study, me):
    """The RUNNING trials whose worker is gone from this machine, failed now
    and their points queued again, as a stale heartbeat would have them."""
    storage = study._storage
    retry = storage.get_heartbeat_stale_trial_callback() if hasattr(storage, "get_heartbeat_stale_trial_callback") \
        else None
    for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)):
        if not gone_here(t.user_attrs.get("worker"), me):
            continue
        try:
            storage.set_trial_state_values(t._trial_id, state=optuna.trial.TrialState.FAIL)
        except (optuna.exceptions.UpdateFinishedTrialError, RuntimeError):
            continue  # another worker failed it first
        print(f"autotune: trial {t.number + 1}, which was evaluating point {t.user_attrs.get('point')}, lost its "
              "worker (its process on this machine is gone): it is failed, and its point evaluated again",
              file=sys.stderr, flush=True)
        if retry is not None:
            retry(study, storage.get_trial(t._trial_id))


def fail_lost(study, me):
    """The RUNNING trials whose worker is known gone failed, their points
    queued again: gone from this machine (fail_gone), or stale, their
    heartbeat stopped for the grace period (optuna's, "experimental")."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        fail_gone(study, me)
        optuna.storages.fail_stale_trials(study)


def settle_running(study, heartbeat, me):
    """Before a worker leaves, the trials other workers still run are
    watched for one grace period and a beat: one whose worker died is failed
    (and its point queued again, for this worker to take), one whose worker
    lives finishes or beats meanwhile and is left to it. Without this wait the
    last worker out would leave a dead worker's trial RUNNING whenever its
    heartbeat had not yet gone stale when the budget was reached."""
    deadline = time.monotonic() + 3 * heartbeat  # optuna's grace is two beats
    running = lambda: study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
    told = False
    while True:
        fail_lost(study, me)
        left = running()
        if not left or time.monotonic() >= deadline:
            return
        if not told:
            print(f"autotune: {len(left)} trial(s) of other workers still running; waiting up to "
                  f"{3 * heartbeat} s to find whether their workers live", file=sys.stderr, flush=True)
            told = True
        time.sleep(min(WAIT_POLL_S, heartbeat))


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

    # the storage first: one that cannot be used is refused before strata starts
    storage = a.storage
    if storage is None:  # in the exploration's directory, which strata would make
        try:
            os.makedirs(a.out, exist_ok=True)
        except OSError as e:
            raise SystemExit(f"autotune: cannot make --out {a.out}: {e.strerror}")
        storage = f"sqlite:///{os.path.abspath(os.path.join(a.out, 'study.db'))}"
    opened = storage_of(storage, a.heartbeat)
    try:
        return tune(a, sampler, storage, opened)
    except ValueError:
        # optuna reading a journal that a worker damaged meanwhile (a line cut
        # short, then another after it): say so, not a traceback
        damage = journal_damage(storage[len("journal:"):]) if storage.startswith("journal:") else None
        if damage:
            raise SystemExit(f"autotune: the journal {storage[len('journal:'):]} was damaged during the study: {damage}")
        raise


def tune(a, sampler, storage, opened):
    """The study run: strata started, trials until the budget, the best measured again."""
    server = Server(strata_command(a))
    space = Space(server.hello)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name=a.study, storage=opened, sampler=sampler, direction="minimize",
                                load_if_exists=True)
    other_space = space.foreign_to(study)
    if other_space:
        server.close()
        raise SystemExit(f"autotune: the study `{a.study}` in {storage} is of another space ({other_space}); "
                         f"this one is `{server.hello['space']}`. Give another --study (or --storage), or its --space")
    me = this_worker()
    fail_gone(study, me)  # a killed run's trial on this machine: queued again, the first we take
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
        # first of all, a beat: optuna's heartbeat thread beats when the thread gets to it,
        # and a trial killed before its first beat (SQLite, under load) never goes stale
        study._storage.record_heartbeat(trial._trial_id)
        if me:  # then: a trial whose worker is found gone on this machine is failed at once
            trial.set_user_attr("worker", me)
        p = space.point(space.suggest(trial))
        trial.set_user_attr("point", p)  # then: a worker that draws p after this waits for us
        other = wait_for_point(study, trial, p, me)
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
        settle_running(study, a.heartbeat, me)
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
