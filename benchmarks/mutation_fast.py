"""Mutation testing of every module of ``transforms/core/`` at a few seconds a mutant (issue 27, "Done when").

Not part of the library nor of CI. ``benchmarks/mutation_core.py`` drives ``mutmut run``; each of its runs
collects the whole test selection twice and records the test map through mutmut's stats trampolines, and each
of its ``fork-run`` children calls ``pytest.main`` again (a fresh collection per mutant): about 40 s a mutant
on a loaded machine. This driver keeps mutmut's mutants (its generator, its trampolines, its mutant names) and
replaces the runner:

* ``prepare``: copy the work tree to ``$MUTATION_WORKDIR`` (default ``/tmp/mutfast``), prepared as
  ``mutation_core`` prepares it (``raise`` lines and ``__repr__`` bodies excluded, decorators unwrapped,
  the ``lru_cache`` caches cleared), and generate the mutants with mutmut's own generator only (no test run).
* ``run``: ONE process, ``nice 15``, one core. It collects the selection once (``SELECTION`` below, with
  ``-m "not pipeline and not slow and not statistical"``), then replaces pytest's run loop:

  1. the test map, once (saved in the copy, reused by later runs): a forked child runs every collected test
     unmutated with mutmut's ``stats`` trampolines (the hit recorder replaced by a set insert) and records, per
     test, the functions it executes (transitively) and its CPU time; a test that fails unmutated is left out;
  2. per mutant, a forked child of the collected, never-run parent activates the mutant
     (``set_mutant_under_test``) and runs the pytest protocol on the tests that execute the mutated function,
     fastest first, round-robin over files, capped at ``--cap`` s of their recorded CPU time, stopping at the
     first failure, under a CPU limit of (their time + 1 s) x 5 + 5 s. The verdict (killed / survived /
     timeout / no tests) goes with the first failing test and its exception type (``AssertionError``: killed
     by an assertion; anything else: by a crash) to ``benchmarks/results/mutation/fast.json`` after every
     mutant, so a stopped run loses nothing and ``run`` resumes where it stopped.

  Sample: per module a seeded uniformly random order of its mutant names (``random.Random(f"{seed}:{module}")``
  over the sorted names, as ``mutation_core``); round r takes the next ``--per-round`` mutants of each module
  (``--critical-per-round`` of the privacy-critical ones, ``CRITICAL``) so that every module has a sample when
  time runs out; the ``FIRST`` modules (never reached before) are served first in each round.
  ``--names FILE``: exactly the mutants the file names (one a line, in its order) instead of the seeded sample.
* ``rerun``: the survivors again, against every test that executes their function (no cap).
* ``recheck [--only M...] [--functions REGEX] [--cap S]``: the mutants killed by a crash, against every covering
  test without stopping at the first failure: which of them an assertion of a test also catches
  (``fast.recheck.json``; issue 27 asks that privacy and bound mutants be killed by an assertion on the property).
* ``confirm NAME TEST...``, ``confirm --pairs-file F`` (a JSON list of ``[NAME, [TEST...]]``) or ``confirm --all``
  (every mutant of the run that ``KILLED_BY`` in ``mutation_core_survivors.py`` names, against its test): the
  check that a new test kills a survivor; each test runs unmutated first (must pass) and then with the mutant (must
  fail); ``--sync`` copies the tests' files from the work tree into the copy first. Verdicts to
  ``benchmarks/results/mutation/fast.confirmed.json``.
* ``summary``: ``fast.json`` + the judged survivors (``benchmarks/mutation_core_survivors.py``) ->
  ``benchmarks/mutation_results_core.json`` and the table of ``docs/testing.md``.

    .venv/bin/python -m benchmarks.mutation_fast prepare
    .venv/bin/python -m benchmarks.mutation_fast run --rounds 5 [--minutes 90]
    .venv/bin/python -m benchmarks.mutation_fast rerun
    .venv/bin/python -m benchmarks.mutation_fast confirm --sync NAME tests/test_x.py::test_y
    .venv/bin/python -m benchmarks.mutation_fast summary

Other modules (stop 57, ``benchmarks/mutation_runs/s57/``): ``MUTATION_MODULES`` (paths to mutate),
``MUTATION_SELECTION`` (test files), ``MUTATION_MARKERS`` (e.g. ``"not slow and not statistical"``: with the
``pipeline`` tests) and ``MUTATION_TAG`` (the suffix of the result, map and confirmation files).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import mutation_summary
from benchmarks.mutation_config import BEAM_CONFTEST_ADDITION
from benchmarks.mutation_core import core_modules, prepare_copy

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "mutation"
WORK = Path(os.environ.get("MUTATION_WORKDIR", "/tmp/mutfast"))
MARKERS = os.environ.get("MUTATION_MARKERS", "not pipeline and not slow and not statistical")
# every test file of the fast tier that runs core code in memory; left out: the files of Beam and its runners,
# external services, plots, timing (speed) and the golden pins (a kill by a pinned value is not a property)
NOT_SELECTED = {
    *(
        f"tests/test_{n}.py"
        for n in (
            "architecture beam_releases beam_yaml bench_reference configs core_purity csv_sink dead_letters flink "
            "flink_cluster follow_source kafka open_histogram_beam open_keys_beam person_beam pipelines plot "
            "plot_sampled pubsub readme results runner speed_memos speed_noise_path speed_period_cost "
            "speed_release_path state_golden tools"
        ).split()
    )
}
SELECTION = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").glob("test_*.py"))
SELECTION = [t for t in SELECTION if t not in NOT_SELECTED]
# a copy prepared before a test file was added runs without it (its test map was recorded without it)
if (WORK / "mutants" / "tests").is_dir():
    SELECTION = [t for t in SELECTION if (WORK / "mutants" / t).exists()]
if os.environ.get("MUTATION_SELECTION"):  # a smoke test of the driver on a few files (its own map and results)
    SELECTION = os.environ["MUTATION_SELECTION"].split()
# privacy-critical modules: a larger sample (the brief: accounting, noise, samplers, bounds, counters,
# net_change, auto, contribution, partition, local DP and its client)
CRITICAL = (
    "transforms/core/foundation/accounting/",
    "transforms/core/foundation/noise.py",
    "transforms/core/foundation/samplers.py",
    "transforms/core/foundation/bounds.py",
    "transforms/core/counters/",
    "transforms/core/continual/net_change.py",
    "transforms/core/continual/auto.py",
    "transforms/core/continual/partition.py",
    "transforms/core/contribution/",
    "transforms/core/families/local_dp.py",
    "transforms/core/families/rr_client.py",
)
# the modules the run of 2026-11-26 never reached: served first
FIRST = (
    "transforms/core/continual/segmented.py",
    "transforms/core/contribution/sensitivity.py",
    "transforms/core/counters/__init__.py",
    "transforms/core/foundation/bounds.py",
    "transforms/core/foundation/entries.py",
    "transforms/core/static/linear.py",
)
_TAG = os.environ.get("MUTATION_TAG") or ("-smoke" if os.environ.get("MUTATION_SELECTION") else "")
RESULTS = OUT / f"fast{_TAG}.json"
MAP = WORK / f"fast_map{_TAG}.json"
CONFIRMED = OUT / f"fast{_TAG}.confirmed.json"
RECHECK = OUT / "fast.recheck.json"
ASSERTIONS = ("AssertionError", "Failed")  # a test's assertion (pytest's Failed: "DID NOT RAISE", pytest.fail)


def _log(msg: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    line = f"{time.strftime('%H:%M:%S', time.gmtime())} {msg}"
    with (OUT / "fast.progress").open("a") as f:
        f.write(line + "\n")
    print(line, flush=True)


# ---- prepare ------------------------------------------------------------------------------------------------------


def prepare(_args: argparse.Namespace) -> None:
    prepare_copy(WORK, ["tests/", "pipelines/", "configs/", "data/", "docs/", "benchmarks/", "pyproject.toml"], [])
    if os.environ.get("MUTATION_MODULES"):  # Beam modules among them: Beam must not see mutmut's method copies
        conftest = WORK / "tests" / "conftest.py"
        conftest.write_text(conftest.read_text() + BEAM_CONFTEST_ADDITION)
    t0 = time.process_time()
    code = (
        "import os\n"
        "from mutmut.mutation.trampoline import set_mutant_under_test\n"
        "import mutmut.__main__ as mm\n"
        "set_mutant_under_test('mutant_generation')\n"
        "os.makedirs('mutants', exist_ok=True)\n"
        "mm.copy_src_dir(); mm.copy_also_copy_files(); mm.setup_source_paths()\n"
        "print(mm.create_mutants(1))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-c", code], cwd=WORK, env=env, check=True, stdout=subprocess.DEVNULL)
    _unmutated_tiers()
    metas = _metas()
    _log(
        f"prepared {WORK}: {len(metas)} modules, {sum(len(v) for v in metas.values())} mutants "
        f"(generation {time.process_time() - t0:.0f} s CPU in this process + the child's)"
    )


def _unmutated_tiers() -> None:
    """The copy's ``tests/tiers.py`` reads the sources (``ast``) of what each test names, transitively, at
    collection; in ``mutants/`` those are the mutated files (every function with its hundreds of mutants): minutes
    of collection. It reads the unmutated copy instead (the same verdicts as in the work tree)."""
    tiers = WORK / "mutants" / "tests" / "tiers.py"
    old = "ROOT = Path(__file__).resolve().parent.parent"
    text = tiers.read_text()
    assert old in text, "tests/tiers.py changed: adapt benchmarks/mutation_fast.py"
    tiers.write_text(text.replace(old, f"ROOT = Path({str(WORK)!r})"))


def _metas() -> dict[str, list[str]]:
    out = {}
    for m in core_modules()[0]:
        meta = WORK / "mutants" / (m + ".meta")
        if meta.exists():
            out[m] = sorted(json.loads(meta.read_text())["exit_code_by_key"])
    return out


def order(module: str, names: list[str], seed: str) -> list[str]:
    """The module's mutants in a seeded uniformly random order (round r takes the next slice)."""
    names = sorted(names)
    random.Random(f"{seed}:{module}").shuffle(names)
    return names


def plan(args: argparse.Namespace) -> list[tuple[int, str, str]]:
    """(round, module, mutant) in run order: round by round, the never-reached modules first in each round."""
    metas = _metas()
    # --critical-first: the privacy-critical modules before the others in each round; --skip: modules whose
    # source changed since the copy was prepared (their mutants in the copy are stale)
    crit = getattr(args, "critical_first", False)
    mods = sorted(metas, key=lambda m: (m not in FIRST, crit and not m.startswith(CRITICAL), m))
    skip = tuple(getattr(args, "skip", None) or ())
    only = tuple(getattr(args, "only", None) or ())
    if getattr(args, "names", None):  # --names FILE: exactly these mutants, in the file's order (round 0)
        module_of = {n: m for m, ns in metas.items() for n in ns}
        wanted = [n for n in Path(args.names).read_text().split() if n]
        unknown = [n for n in wanted if n not in module_of]
        if unknown:
            sys.exit(f"--names: {len(unknown)} mutants not in the copy, e.g. {unknown[0]}")
        return [(0, module_of[n], n) for n in wanted if not only or module_of[n].startswith(only)]
    out = []
    for r in range(args.rounds):
        for m in mods:
            if m in skip or (only and not m.startswith(only)):
                continue
            k = args.critical_per_round if m.startswith(CRITICAL) else args.per_round
            out += [(r, m, n) for n in order(m, metas[m], args.seed)[r * k : (r + 1) * k]]
    return out


# ---- the warm process ---------------------------------------------------------------------------------------------


class Runner:
    """A pytest plugin that takes over the run loop of a session that collected the selection once."""

    def __init__(self, args: argparse.Namespace, todo: list[tuple[int, str, str]] | None) -> None:
        self.args = args
        self.todo = todo
        self.failure: tuple[str, str] | None = None
        self.failures: list[tuple[str, str]] = []  # every failure of a child (recheck)
        self.stream_fd: int | None = None

    # the first failing test of a child and its exception type
    def pytest_runtest_logreport(self, report) -> None:
        if report.failed:
            exc = getattr(report, "_h27_exc", "?")
            if self.failure is None:
                self.failure = (report.nodeid, exc)
            self.failures.append((report.nodeid, exc))
            if self.stream_fd is not None:  # recheck: each failure as it happens (a later timeout keeps them)
                os.write(self.stream_fd, (json.dumps([report.nodeid, exc]) + "\n").encode())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        rep = yield
        if call.excinfo is not None:
            rep._h27_exc = call.excinfo.typename
        return rep

    def _protocol(self, items: list, stop_at_failure: bool) -> None:
        for i, item in enumerate(items):
            nxt = items[i + 1] if i + 1 < len(items) else None
            self.before_test(item)
            item.ihook.pytest_runtest_protocol(item=item, nextitem=nxt)
            if stop_at_failure and self.failure is not None:
                return  # the child exits: no teardown of what the next item would have kept

    # hooks of a subclass (``benchmarks/mutation_trace.py``): in the child, once its mutant is active; before each test
    def child_setup(self, name: str, fd: int | None) -> None:
        pass

    def before_test(self, item) -> None:
        pass

    def pytest_runtestloop(self, session):
        items = {it.nodeid: it for it in session.items}
        _log(f"collected {len(items)} tests of {len(SELECTION)} files")
        if self.todo is None:  # confirm
            self._confirm(items)
            return True
        tmap = self._test_map(session, list(items.values()))
        if getattr(self.args, "recheck", False):
            self._recheck(items, tmap)
        else:
            self._mutants(items, tmap)
        return True

    # -- the test map --
    def _test_map(self, session, items: list) -> dict:
        if MAP.exists():
            return json.loads(MAP.read_text())
        t0 = time.time()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            self._quiet()
            import mutmut.mutation.trampoline as tr  # noqa: PLC0415

            hits: set[str] = set()
            tr.record_trampoline_hit = lambda name, caller=None: hits.add(name)
            tr.set_mutant_under_test("stats")
            by_test, dur, failed = {}, {}, []
            for i, item in enumerate(items):
                nxt = items[i + 1] if i + 1 < len(items) else None
                hits.clear()
                self.failure = None
                c0 = time.process_time()
                item.ihook.pytest_runtest_protocol(item=item, nextitem=nxt)
                dur[item.nodeid] = time.process_time() - c0
                if self.failure is not None:
                    failed.append(item.nodeid)
                else:
                    by_test[item.nodeid] = sorted(hits)
            tests_by_fn: dict[str, list[str]] = {}
            for t, fns in by_test.items():
                for f in fns:
                    tests_by_fn.setdefault(f, []).append(t)
            MAP.write_text(json.dumps({"tests_by_function": tests_by_fn, "duration": dur, "failed": failed}))
            os.write(w, b"ok")
            os._exit(0)
        os.close(w)
        _, st = os.waitpid(pid, 0)
        ok = os.read(r, 2) == b"ok"
        if not ok or not MAP.exists():
            sys.exit(f"the test-map child failed (status {st})")
        d = json.loads(MAP.read_text())
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        _log(
            f"test map: {len(d['duration'])} tests, {len(d['failed'])} failing unmutated (left out), "
            f"{len(d['tests_by_function'])} functions; {time.time() - t0:.0f} s wall, "
            f"{ru.ru_utime + ru.ru_stime:.0f} s CPU (children so far)"
        )
        if d["failed"]:
            _log("failing unmutated: " + " ".join(d["failed"][:20]))
        return d

    @staticmethod
    def _quiet() -> None:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)

    def _tests_for(self, name: str, tmap: dict, cap: float) -> list[str]:
        from mutmut.utils.format_utils import mangled_name_from_mutant_name  # noqa: PLC0415

        dur = tmap["duration"]
        tests = tmap["tests_by_function"].get(mangled_name_from_mutant_name(name), [])
        by_file: dict[str, list[str]] = {}
        for t in sorted(tests, key=lambda t: (dur.get(t, 0.0), t)):
            by_file.setdefault(t.split("::")[0], []).append(t)
        queues = [by_file[k] for k in sorted(by_file)]
        kept, total = [], 0.0
        while any(queues):
            for q in queues:
                if q and (cap <= 0 or not kept or total + dur.get(q[0], 0.0) <= cap):
                    total += dur.get(q[0], 0.0)
                    kept.append(q.pop(0))
                elif q:
                    q.clear()
        # fastest first over the kept ones (a kill usually comes from the first tests)
        return sorted(kept, key=lambda t: (dur.get(t, 0.0), t))

    def _one(self, name: str, tests: list, dur: dict, limit: int = 0, every: bool = False) -> dict:
        t0, c0 = time.time(), _children_cpu()
        if not tests:
            return {"status": "no tests", "tests": 0, "wall": 0.0, "cpu": 0.0}
        limit = limit or int((sum(dur.get(t.nodeid, 0.0) for t in tests) + 1) * 5) + 5
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            self._quiet()
            from mutmut.mutation.trampoline import set_mutant_under_test  # noqa: PLC0415

            set_mutant_under_test(name)
            self.child_setup(name, w if every else None)
            resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
            signal.alarm(limit * 20)
            self.failure, self.failures = None, []
            self.stream_fd = w if every else None
            self._protocol(tests, stop_at_failure=not every)
            if not every:
                os.write(w, json.dumps(self.failure).encode())
            os._exit(1 if self.failure else 0)
        os.close(w)
        data = b""  # read to the end first (the child's exit closes it): a full pipe never blocks the child
        while chunk := os.read(r, 65536):
            data += chunk
        os.close(r)
        _, st = os.waitpid(pid, 0)
        if every:  # one JSON line per failure, written as they happened
            first = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        else:
            first = json.loads(data) if data else None
        if os.WIFSIGNALED(st):
            sig = os.WTERMSIG(st)
            status = "timeout" if sig in (signal.SIGXCPU, signal.SIGKILL, signal.SIGALRM) else f"signal {sig}"
        else:
            status = {0: "survived", 1: "killed"}.get(os.WEXITSTATUS(st), f"exit {os.WEXITSTATUS(st)}")
        out = {"status": status, "tests": len(tests), "wall": round(time.time() - t0, 2)}
        out["cpu"] = round(_children_cpu() - c0, 2)
        if every and any(isinstance(x, dict) for x in first or ()):  # a subclass's events (mutation_trace)
            out["events"] = [x for x in first if isinstance(x, dict)]
            first = [x for x in first if not isinstance(x, dict)]
        if first and every:
            out["failures"] = first
        elif first:
            out["by"], out["exc"] = first
        return out

    def _mutants(self, items: dict, tmap: dict) -> None:
        done = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        dur = tmap["duration"]
        deadline = time.time() + 60 * self.args.minutes if self.args.minutes else None
        n = 0
        for r, m, name in self.todo:
            if name in done and not self.args.again:
                continue
            if (deadline and time.time() > deadline) or (OUT / "fast.stop").exists():
                _log("time or stop file: stopping")
                break
            names = self._tests_for(name, tmap, self.args.cap)
            res = self._one(name, [items[t] for t in names if t in items], dur)
            res.update({"round": r, "module": m})
            if self.args.again and name in done:
                res["first_run"] = done[name]
            done[name] = res
            RESULTS.write_text(json.dumps(done, indent=0))
            n += 1
            by = f" by {res['by']} ({res['exc']})" if "by" in res else ""
            _log(f"r{r} {name}: {res['status']} ({res['cpu']:.1f} s CPU, {res['wall']:.1f} s, {res['tests']} t){by}")
        _log(f"{n} mutants run")

    def _recheck(self, items: dict, tmap: dict) -> None:
        """Each mutant of ``self.todo`` (killed by a crash in ``run``) against every test that executes its
        function (capped at ``--cap`` s, 0: all), without stopping at the first failure: does an assertion of a
        test (``AssertionError``, pytest's ``Failed``) also fail on it, or only crashes? To ``fast.recheck.json``."""
        out = json.loads(RECHECK.read_text()) if RECHECK.exists() else {}
        dur = tmap["duration"]
        for _r, _m, name in self.todo:
            if name in out:
                continue
            if (OUT / "fast.stop").exists():
                break
            names = self._tests_for(name, tmap, self.args.cap)
            tests = [items[t] for t in names if t in items]
            # every test runs to its end, and a failing test's report costs CPU its passing time does not show (its
            # traceback): run's limit, (time + 1) x 5 + 5 s, timed out children whose tests nearly all fail, and a
            # timed-out child reports no failure at all; 2 s more a test
            limit = int((sum(dur.get(t.nodeid, 0.0) for t in tests) + 1) * 5) + 5 + 2 * len(tests)
            res = self._one(name, tests, dur, limit=limit, every=True)
            fails = res.pop("failures", [])
            asserts = [t for t, exc in fails if exc in ASSERTIONS]
            res.update({"failed": len(fails), "by_assertion": asserts[:5], "n_by_assertion": len(asserts)})
            res["crash_types"] = sorted({exc for _t, exc in fails if exc not in ASSERTIONS})
            out[name] = res
            RECHECK.write_text(json.dumps(out, indent=0))
            _log(f"recheck {name}: {len(asserts)} of {len(fails)} failures by an assertion ({res['cpu']:.1f} s CPU)")

    def _confirm(self, items: dict) -> None:
        results = {}
        for name, wanted in self.args.pairs:
            tests = [
                it for nid, it in items.items() if any(nid == t or nid.startswith((t + "::", t + "[")) for t in wanted)
            ]
            clean = self._one("none.none", tests, {}, limit=600)
            res = self._one(name, tests, {}, limit=600)
            ok = clean["status"] == "survived" and res["status"] == "killed"
            results[name] = {"verdict": "KILLED" if ok else "NOT CONFIRMED", "unmutated": clean, "mutated": res}
            print(json.dumps({"mutant": name, **results[name]}), flush=True)
        old = json.loads(CONFIRMED.read_text()) if CONFIRMED.exists() else {}
        CONFIRMED.write_text(json.dumps({**old, **results}, indent=1))


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def session(args: argparse.Namespace, todo, files: list[str], runner: type | None = None) -> int:
    mut = WORK / "mutants"
    sys.path[:] = [str(mut), str(mut / "tests")] + [p for p in sys.path if Path(p or ".").resolve() != ROOT]
    for k in [k for k in sys.modules if k == "benchmarks" or k.startswith(("benchmarks.", "transforms"))]:
        del sys.modules[k]
    os.chdir(mut)
    os.environ.pop("PYTHONPATH", None)
    os.environ["MUTANT_UNDER_TEST"] = ""
    os.nice(max(0, int(os.environ.get("MUTATION_NICE", "15")) - os.nice(0)))
    import pytest  # noqa: PLC0415

    runner = runner or Runner
    plugin = runner(args, todo)
    # --tb=no: a failure's traceback is never shown, and formatting it parses (ast) the source of every frame, which
    # in mutants/ is the mutated file with all its mutants: seconds per failure, minutes per mutant in ``recheck``,
    # which runs every covering test (the exception type still comes from pytest_runtest_makereport)
    args_ = ["-q", "--tb=no", "-n", "0", "-p", "no:cacheprovider", "-m", MARKERS, *files]
    return int(pytest.main(args_, plugins=[plugin]))


def run(args: argparse.Namespace) -> None:
    todo = plan(args)
    if args.names:
        _log(f"plan: {len(todo)} mutants named by {args.names} (cap {args.cap} s)")
    else:
        _log(f"plan: {len(todo)} mutants in {args.rounds} rounds (seed {args.seed}, cap {args.cap} s)")
    session(args, todo, SELECTION)


def rerun(args: argparse.Namespace) -> None:
    done = json.loads(RESULTS.read_text())
    todo = [(v["round"], v["module"], k) for k, v in done.items() if v["status"] == "survived"]
    args.cap, args.again = 0.0, True
    _log(f"rerun: {len(todo)} survivors against every test that executes their function")
    session(args, todo, SELECTION)


def recheck(args: argparse.Namespace) -> None:
    """The mutants of ``fast.json`` killed by a crash (not a timeout, not an assertion), of the ``--only`` modules and
    of the functions whose mangled name matches ``--functions`` (a regular expression), against every covering test."""
    import re  # noqa: PLC0415

    done = json.loads(RESULTS.read_text())
    only = tuple(args.only or ())
    pat = re.compile(args.functions)
    todo = [
        (v["round"], v["module"], k)
        for k, v in done.items()
        if v["status"] == "killed"
        and v.get("exc") not in ASSERTIONS
        and (not only or v["module"].startswith(only))
        and pat.search(k.rsplit("__mutmut_", 1)[0])
    ]
    args.again, args.recheck = True, True
    _log(f"recheck: {len(todo)} mutants killed by a crash, against every covering test (cap {args.cap} s)")
    session(args, todo, SELECTION)


def confirm(args: argparse.Namespace) -> None:
    """``NAME TEST...``, or ``--all``: every mutant of this run that ``KILLED_BY`` names, against its test."""
    if args.all:
        from benchmarks.mutation_core_survivors import KILLED_BY  # noqa: PLC0415

        done = json.loads(RESULTS.read_text())
        args.pairs = [
            (n, [t]) for n, t in KILLED_BY.items() if done.get(n, {}).get("status") in ("survived", "no tests")
        ]
    elif args.pairs_file:  # [[NAME, [TEST, ...]], ...]: many mutants against their tests in one session
        args.pairs = [(n, list(ts)) for n, ts in json.loads(Path(args.pairs_file).read_text())]
    else:
        args.pairs = [(args.names[0], args.tests)]
    wanted = sorted({t for _, ts in args.pairs for t in ts})
    files = sorted({t.split("::")[0] for t in wanted})
    if args.sync:
        for f in files:
            for dst in (WORK / f, WORK / "mutants" / f):
                shutil.copy2(ROOT / f, dst)
    session(args, None, files)


# ---- the summary (benchmarks/mutation_summary.py) ------------------------------------------------------------------


def summary(args: argparse.Namespace) -> None:
    mutation_summary.summary(
        args,
        results=RESULTS,
        recheck_name=RECHECK.name,
        metas=_metas(),
        root=ROOT,
        selection=SELECTION,
        markers=MARKERS,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("prepare")
    for name in ("run", "rerun", "recheck", "summary"):
        r = sub.add_parser(name)
        r.add_argument("--rounds", type=int, default=5)
        r.add_argument("--per-round", type=int, default=2)
        r.add_argument("--critical-per-round", type=int, default=5)
        r.add_argument("--seed", default="20261127")
        r.add_argument("--cap", type=float, default=8.0, help="seconds of covering tests per mutant (0: all)")
        r.add_argument("--minutes", type=float, default=0.0, help="stop after this many minutes (0: no limit)")
        r.add_argument("--again", action="store_true", help="run mutants that have a verdict again")
        r.add_argument("--critical-first", action="store_true", help="privacy-critical modules first in a round")
        r.add_argument("--skip", nargs="*", default=[], help="modules (paths) to leave out of the plan")
        r.add_argument("--only", nargs="*", default=[], help="only the modules whose path starts with one of these")
        r.add_argument("--names", default="", help="run: a file of mutant names, run exactly these in its order")
        r.add_argument("--functions", default=".", help="recheck: a regular expression on the mutant's function")
        r.add_argument("--results", nargs="*", default=[], help="summary: these runs' fast.json, merged")
    c = sub.add_parser("confirm")
    c.add_argument("names", nargs="?")
    c.add_argument("tests", nargs="*")
    c.add_argument("--sync", action="store_true", help="copy the tests' files from the work tree into the copy")
    c.add_argument("--all", action="store_true", help="every mutant of the run that KILLED_BY names")
    c.add_argument("--pairs-file", default="", help="a JSON list of [mutant name, [tests]] pairs")
    a = ap.parse_args()
    if a.cmd == "confirm":
        a.names = [a.names]
    {"prepare": prepare, "run": run, "rerun": rerun, "recheck": recheck, "confirm": confirm, "summary": summary}[a.cmd](
        a
    )


if __name__ == "__main__":
    main()
