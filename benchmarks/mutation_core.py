"""Mutation testing over every module of ``transforms/core/`` in one mutmut 3 run (issue 27, "Done when").

Not part of the library nor of CI. ``benchmarks/mutation.sh`` runs mutmut over one module with that
module's hand-picked test subset; this driver runs it over the whole core at once, with one test selection:
the fast tier's core tests (``CORE_TESTS`` below with ``-m "not pipeline and not slow and not
statistical"``; never a pipeline test). mutmut records, in one unmutated run, which test executes which
function; each mutant then runs only the tests of the selection that execute the mutated function (``-x``,
forked from a warm process, a CPU-time limit), so one selection serves every module.

Sampling: a uniform random sample of each module's mutants (seeded: ``random.Random(f"{seed}:{module}")``
shuffles the module's sorted mutant names; round r takes the next slice), run in rounds so that every module
has a sample when time runs out; privacy-critical modules (``CRITICAL``) take a larger slice per round.
The copy is prepared as ``mutation.sh`` prepares it (``benchmarks/mutation_config.py``: ``raise`` lines and
``__repr__`` bodies excluded, decorators unwrapped so decorated functions are mutated, ``lru_cache``
cleared before each mutant's tests).

    .venv/bin/python -m benchmarks.mutation_core run [--rounds 3] [--per-round 5] [--critical-per-round 8]
    .venv/bin/python -m benchmarks.mutation_core report          # verdicts so far -> results JSON
    .venv/bin/python -m benchmarks.mutation_core confirm NAME TEST...   # activate one mutant, run tests

``run`` copies the work tree to ``$MUTATION_WORKDIR`` (default ``/tmp/mutcore``), runs at ``nice 15`` with
one worker and appends its progress to ``benchmarks/results/mutation/core.progress`` (ignored by git).
``report`` writes ``benchmarks/results/mutation/core.json``: per module generated / sampled / killed /
timeout / survived / no tests, and the survivors. ``confirm`` runs the given tests in the copy's
``mutants/`` with ``MUTANT_UNDER_TEST=NAME`` (mutmut's own switch): the check that a new test kills a
survivor (copy the new test file into the copy's ``tests/`` and ``mutants/tests/`` first, ``--sync``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.mutation_config import CONFTEST_ADDITION, add_pragmas, undecorate

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "mutation"
WORK = Path(os.environ.get("MUTATION_WORKDIR", "/tmp/mutcore"))
MARKERS = "not pipeline and not slow and not statistical"
# the core test files of the fast tier (the -m filter above drops any pipeline, slow or statistical test)
CORE_TESTS = [
    f"tests/test_{n}.py"
    for n in (
        "accounting aggregates alg3_reference bound_coverage bounds_reference calibration changelog changelog_orders "
        "consistency contract "
        "contribution_harness contribution_lemmas contribution_sensitivity counters coverage dynamic "
        "factorization fully_dynamic_tight growing local_dp net_change noise partition person_bounding "
        "person_core plans pmw protocol state_graph privacy_audit privacy_contract published_figures static"
    ).split()
]
# privacy-critical modules: a larger sample (the brief's list)
CRITICAL = (
    "transforms/core/foundation/accounting/",
    "transforms/core/foundation/noise.py",
    "transforms/core/foundation/bounds.py",
    "transforms/core/counters/",
    "transforms/core/continual/net_change.py",
    "transforms/core/continual/auto.py",
    "transforms/core/contribution/",
)


def core_modules() -> tuple[list[str], list[str]]:
    """(modules with logic, modules skipped: no function or method to mutate). ``MUTATION_MODULES`` (paths,
    space-separated, e.g. ``transforms/person.py transforms/bounded.py``): exactly these modules instead of
    ``transforms/core/`` (the Beam layer's round, stop 57)."""
    if os.environ.get("MUTATION_MODULES"):
        return sorted(os.environ["MUTATION_MODULES"].split()), []
    mods, skipped = [], []
    for p in sorted((ROOT / "transforms" / "core").rglob("*.py")):
        rel = p.relative_to(ROOT).as_posix()
        text = p.read_text()
        (mods if ("def " in text) else skipped).append(rel)
    return mods, skipped


def _log(msg: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    line = f"{time.strftime('%H:%M:%S', time.gmtime())} {msg}"
    with (OUT / "core.progress").open("a") as f:
        f.write(line + "\n")
    print(line, flush=True)


def prepare_copy(work: Path, also_copy: list[str], extra: list[str]) -> None:
    """A fresh copy of the work tree at ``work`` (the files git tracks or would track), its core modules prepared
    for mutmut (``raise`` lines and ``__repr__`` bodies excluded by pragmas, decorators unwrapped, compiled to
    check them), the conftest's addition, and a ``setup.cfg`` whose ``[mutmut]`` section copies ``also_copy``
    and ends with the lines ``extra`` (the runner's own options). Shared by this module and
    ``benchmarks/mutation_fast.py``."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    files = subprocess.run(
        ["git", "ls-files", "-z", "-c", "-o", "--exclude-standard"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = ROOT / rel
        if src.is_file():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, work / rel)
    for m in core_modules()[0]:
        path = work / m
        src, _marked = add_pragmas(path.read_text())
        src, _undecorated = undecorate(src)
        compile(src, str(path), "exec")
        path.write_text(src)
    conftest = work / "tests" / "conftest.py"
    conftest.write_text(conftest.read_text() + CONFTEST_ADDITION)
    only = os.environ["MUTATION_MODULES"].split() if os.environ.get("MUTATION_MODULES") else ["transforms/core/*"]
    cfg = ["[mutmut]", "source_paths = transforms/", "only_mutate =", *(f"    {m}" for m in only), "also_copy ="]
    cfg += [f"    {a}" for a in also_copy]
    (work / "setup.cfg").write_text("\n".join([*cfg, *extra, "use_git_change_detection = false", ""]))


def prepare() -> None:
    extra = [
        "pytest_add_cli_args_test_selection =",
        *(f"    {t}" for t in CORE_TESTS),
        "    -m",
        f"    {MARKERS}",
        "pytest_add_cli_args =",
        "    -p",
        "    no:cacheprovider",
        "timeout_multiplier = 2.5",
        "timeout_constant = 1.0",
    ]
    prepare_copy(WORK, ["pipelines/", "configs/", "data/", "docs/", "benchmarks/"], extra)


# mutmut's "clean run" before the mutants re-runs, unmutated, every test any chosen mutant needs (most of the
# selection: as long as the stats run); the stats run has already run them all unmutated and recorded their
# times. The wrapper keeps one test per file of it: enough to import and warm what the forked mutants use.
WRAPPER = """
import sys
from mutmut.workers import isolation

_orig = isolation.ForkRunner.run_clean_tests

def _one_per_file(self, tests):
    first = {}
    for t in sorted(tests):
        first.setdefault(t.split("::")[0], t)
    return _orig(self, list(first.values()))

isolation.ForkRunner.run_clean_tests = _one_per_file
from mutmut.__main__ import cli
sys.argv = ["mutmut", *sys.argv[1:]]
cli()
"""


def _mutmut(*args: str, log: Path) -> int:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTEST_ADDOPTS"] = "-n 0"
    nice = ["nice", "-n", os.environ.get("MUTATION_NICE", "15")]
    with log.open("a") as f:
        return subprocess.run(
            [*nice, sys.executable, "-c", WRAPPER, "run", "--max-children", "1", *args],
            cwd=WORK,
            env=env,
            stdout=f,
            stderr=subprocess.STDOUT,
        ).returncode


def _metas() -> dict[str, dict]:
    out = {}
    for m in core_modules()[0]:
        meta = WORK / "mutants" / (m + ".meta")
        if meta.exists():
            out[m] = json.loads(meta.read_text())
    return out


def cap_tests(cap: float) -> None:
    """Keep, per function, covering tests worth at most ``cap`` seconds (of the unmutated run's times): the
    fastest test of each test file in turn, round-robin over the files, until the next would pass the cap (at
    least one). A survivor under the cap is then run against every covering test (``--uncapped``)."""
    stats = WORK / "mutants" / "mutmut-stats.json"
    full = WORK / "mutants" / "mutmut-stats.full.json"
    if not full.exists():
        shutil.copy2(stats, full)
    d = json.loads(full.read_text())
    dur = d["duration_by_test"]
    if cap > 0:
        for f, tests in d["tests_by_mangled_function_name"].items():
            by_file: dict[str, list[str]] = {}
            for t in sorted(tests, key=lambda t: (dur.get(t, 0.0), t)):
                by_file.setdefault(t.split("::")[0], []).append(t)
            queues = [by_file[k] for k in sorted(by_file)]
            kept, total = [], 0.0
            while any(queues):
                for q in queues:
                    if q and (not kept or total + dur.get(q[0], 0.0) <= cap):
                        total += dur.get(q[0], 0.0)
                        kept.append(q.pop(0))
                    elif q:
                        q.clear()
            d["tests_by_mangled_function_name"][f] = kept
    stats.write_text(json.dumps(d))


def order(module: str, names: list[str], seed: str) -> list[str]:
    """The module's mutants in a seeded uniformly random order (round r takes the next slice)."""
    names = sorted(names)
    random.Random(f"{seed}:{module}").shuffle(names)
    return names


def run(args: argparse.Namespace) -> None:
    log = OUT / "core.log"
    OUT.mkdir(parents=True, exist_ok=True)
    if not args.resume:
        _log(f"copy and prepare in {WORK}")
        prepare()
        _log("generate mutants and record which test runs which function (one unmutated run)")
        _mutmut("__generate_only__", log=log)
    cap_tests(args.cap)
    _log(f"covering tests capped at {args.cap} s per mutant" if args.cap > 0 else "every covering test")
    metas = _metas()
    _log(f"{len(metas)} modules with mutants, {sum(len(m['exit_code_by_key']) for m in metas.values())} mutants")
    ordered = {m: order(m, list(meta["exit_code_by_key"]), args.seed) for m, meta in metas.items()}
    plan = {"seed": args.seed, "rounds": []}
    for r in range(args.start_round, args.rounds):
        names = []
        for m, o in ordered.items():
            k = args.critical_per_round if m.startswith(CRITICAL) else args.per_round
            names += o[r * k : (r + 1) * k]
        if not names:
            break
        plan["rounds"].append(names)
        (OUT / f"core.round{r}").write_text("\n".join(names) + "\n")
        _log(f"round {r}: {len(names)} mutants")
        rc = _mutmut(*names, log=log)
        _log(f"round {r} done (mutmut exit {rc})")
        report(argparse.Namespace(rounds=r + 1))
        if Path(OUT / "core.stop").exists():
            _log("stop file found: stopping after this round")
            break


def _status(code: int | None) -> str:
    from mutmut.stats import status_by_exit_code  # noqa: PLC0415 (only in the mutation venv)

    return "not run" if code is None else status_by_exit_code[code]


def report(args: argparse.Namespace) -> dict:
    sampled: set[str] = set()
    for r in range(getattr(args, "rounds", 99)):
        p = OUT / f"core.round{r}"
        if p.exists():
            sampled |= set(p.read_text().split())
    fork_path = OUT / "core.fork.json"
    fork = json.loads(fork_path.read_text()) if fork_path.exists() else {}
    per = {}
    for m, meta in _metas().items():
        codes = meta["exit_code_by_key"]
        rows: dict[str, list[str]] = {}
        for name in sorted(sampled & set(codes)):
            status = fork.get(name) or _status(codes[name])
            if status == "not run":
                continue
            rows.setdefault(status, []).append(name)
        per[m] = {
            "generated": len(codes),
            "sampled": sum(len(v) for v in rows.values()),
            **{k: len(v) for k, v in rows.items()},
            "survivors": rows.get("survived", []) + rows.get("no tests", []),
        }
    (OUT / "core.json").write_text(json.dumps(per, indent=1))
    tot = {k: sum(v.get(k, 0) for v in per.values()) for k in ("sampled", "killed", "timeout", "survived", "no tests")}
    _log(f"report: {tot}")
    return per


def confirm(args: argparse.Namespace) -> None:
    mut = WORK / "mutants"
    tests = list(args.tests)
    if args.sync:
        for t in tests:
            f = t.split("::")[0]
            for dst in (WORK / f, mut / f):
                shutil.copy2(ROOT / f, dst)
    if args.auto:  # the covering tests the run gave it (capped), fastest first
        from mutmut.utils.format_utils import mangled_name_from_mutant_name  # noqa: PLC0415

        st = json.loads((mut / "mutmut-stats.json").read_text())
        dur = st["duration_by_test"]
        cover = st["tests_by_mangled_function_name"].get(mangled_name_from_mutant_name(args.name), [])
        tests += sorted(cover, key=lambda t: dur.get(t, 0.0))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["MUTANT_UNDER_TEST"] = args.name
    env["PYTHONPATH"] = str(mut)
    rc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-rf", "-n", "0", "-p", "no:cacheprovider", *tests],
        cwd=mut,
        env=env,
        capture_output=True,
        text=True,
    )
    lines = rc.stdout.strip().splitlines() or [""]
    failed = [x for x in lines if x.startswith("FAILED") or x.startswith("ERROR")]
    print(
        f"{args.name}: exit {rc.returncode} ({'KILLED' if rc.returncode == 1 else 'not killed'}) {lines[-1]} "
        f"{failed[0][:200] if failed else ''}"
    )


def fork_run(args: argparse.Namespace) -> None:
    """More rounds without mutmut's per-invocation collection of the whole selection (minutes on a busy
    machine): mutmut's own mechanism by hand. In the copy's ``mutants/`` (mutmut's trampolines read
    ``MUTANT_UNDER_TEST`` at each call), one warm process imports the tests (one per file, unmutated, must pass),
    then forks a child per mutant that runs, with ``-x``, the (capped) covering tests mutmut recorded, under a
    CPU-time limit of (their time + 1 s) x 5. Verdicts go to ``core.fork.json`` (merged by ``report``)."""
    import resource  # noqa: PLC0415
    import signal  # noqa: PLC0415

    mut = WORK / "mutants"
    sys.path[:] = [str(mut)] + [p for p in sys.path if Path(p or ".").resolve() != ROOT]
    os.chdir(mut)
    os.environ.pop("PYTHONPATH", None)
    os.environ["MUTANT_UNDER_TEST"] = ""
    import pytest  # noqa: PLC0415
    from mutmut.utils.format_utils import mangled_name_from_mutant_name  # noqa: PLC0415

    stats = json.loads((mut / "mutmut-stats.json").read_text())
    tests_by, dur = stats["tests_by_mangled_function_name"], stats["duration_by_test"]
    names = []
    for r in range(args.start_round, args.rounds):
        p = OUT / f"core.round{r}"
        if not p.exists():
            metas = _metas()
            sel = []
            for m, meta in metas.items():
                o = order(m, list(meta["exit_code_by_key"]), args.seed)
                k = args.critical_per_round if m.startswith(CRITICAL) else args.per_round
                sel += o[r * k : (r + 1) * k]
            p.write_text("\n".join(sel) + "\n")
        names += [(r, n) for n in p.read_text().split()]
    out_path = OUT / "core.fork.json"
    done = json.loads(out_path.read_text()) if out_path.exists() else {}
    files = sorted({t.split("::")[0] for ts in tests_by.values() for t in ts})
    first = {}
    for t in sorted(dur):
        first.setdefault(t.split("::")[0], t)
    warm = [first[f] for f in files if f in first]
    rc = pytest.main(["-q", "-x", "-n", "0", "-p", "no:cacheprovider", *warm])
    _log(f"fork-run: warm-up over {len(warm)} tests: exit {int(rc)}; {len(names)} mutants in rounds")
    if int(rc) != 0:
        sys.exit("the unmutated warm-up failed")
    os.nice(int(os.environ.get("MUTATION_NICE", "15")) - os.nice(0))
    for r, name in names:
        if name in done:
            continue
        if (OUT / "core.stop").exists() and args.honour_stop:
            _log("stop file found")
            break
        tests = sorted(tests_by.get(mangled_name_from_mutant_name(name), []), key=lambda t: dur.get(t, 0.0))
        t0 = time.time()
        if not tests:
            status = "no tests"
        else:
            limit = int((sum(dur.get(t, 0.0) for t in tests) + 1) * 5) + 5
            pid = os.fork()
            if pid == 0:  # the child: one mutant
                os.environ["MUTANT_UNDER_TEST"] = name
                resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
                fd = os.open(os.devnull, os.O_WRONLY)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                code = pytest.main(["-q", "-x", "-n", "0", "-p", "no:cacheprovider", *tests])
                os._exit(int(code))
            _, st = os.waitpid(pid, 0)
            if os.WIFSIGNALED(st):
                sig = os.WTERMSIG(st)
                status = "timeout" if sig in (signal.SIGXCPU, signal.SIGKILL) else f"signal {sig}"
            else:
                code = os.WEXITSTATUS(st)
                status = {0: "survived", 1: "killed", 5: "no tests"}.get(code, f"exit {code}")
        done[name] = status
        out_path.write_text(json.dumps(done, indent=0))
        _log(f"round {r} {name}: {status} ({time.time() - t0:.1f} s, {len(tests)} tests)")


def clopper_pearson(k: int, n: int) -> tuple[float, float]:
    """The exact two-sided 95% confidence interval of a binomial proportion k / n."""
    from scipy.stats import beta  # noqa: PLC0415 (the test extra)

    if n == 0:
        return (0.0, 1.0)
    lo = 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))
    return (lo, hi)


def summary(_args: argparse.Namespace) -> None:
    """core.json + the judged survivors (``benchmarks/mutation_core_survivors.py``) ->
    ``benchmarks/mutation_results_core.json`` and the table of ``docs/testing.md``."""
    from benchmarks.mutation_core_survivors import EQUIVALENT, KILLED_BY  # noqa: PLC0415

    per = json.loads((OUT / "core.json").read_text())
    rows, tot = {}, dict.fromkeys(("sampled", "first", "timeout", "equivalent", "closed", "open"), 0)
    for m, r in sorted(per.items()):
        if not r["sampled"]:
            continue
        surv = r["survivors"]
        eq = [n for n in surv if n in EQUIVALENT]
        closed = [n for n in surv if n in KILLED_BY]
        open_ = [n for n in surv if n not in EQUIVALENT and n not in KILLED_BY]
        first = r.get("killed", 0) + r.get("timeout", 0)
        nonequiv = r["sampled"] - len(eq)
        k = nonequiv - len(open_)
        lo, hi = clopper_pearson(k, nonequiv)
        rows[m] = {
            "generated": r["generated"],
            "sampled": r["sampled"],
            "killed_first_run": first,
            "of_which_timeout": r.get("timeout", 0),
            "equivalent": len(eq),
            "killed_by_new_tests": len(closed),
            "open": open_,
            "non_equivalent_killed": k,
            "non_equivalent": nonequiv,
            "kill_rate_non_equivalent": k / nonequiv if nonequiv else None,
            "ci95": [round(lo, 3), round(hi, 3)],
            "equivalent_mutants": {n: EQUIVALENT[n] for n in eq},
            "closed_mutants": {n: KILLED_BY[n] for n in closed},
        }
        for key, v in (("sampled", r["sampled"]), ("first", first), ("equivalent", len(eq))):
            tot[key] += v
        tot["closed"] += len(closed)
        tot["timeout"] += r.get("timeout", 0)
        tot["open"] += len(open_)
    out = {
        "tool": "mutmut 3.8.1 via benchmarks/mutation_core.py",
        "seed": "20261126",
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "totals": tot,
        "modules": rows,
    }
    (ROOT / "benchmarks" / "mutation_results_core.json").write_text(json.dumps(out, indent=1) + "\n")
    print(
        "| module | mutants | sampled | killed (first run; timeouts) | equivalent | killed by new tests | open | "
        "non-equivalent killed | 95% CI |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for m, r in rows.items():
        rate = r["kill_rate_non_equivalent"]
        print(
            f"| `{m.removeprefix('transforms/core/')}` | {r['generated']} | {r['sampled']} | "
            f"{r['killed_first_run']} ({r['of_which_timeout']}) | "
            f"{r['equivalent']} | {r['killed_by_new_tests']} | {len(r['open'])} | "
            f"{r['non_equivalent_killed']}/{r['non_equivalent']} ({100 * rate:.0f}%) | "
            f"{100 * r['ci95'][0]:.0f}-{100 * r['ci95'][1]:.0f}% |"
        )
    print(tot)


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--start-round", type=int, default=0)
    r.add_argument("--per-round", type=int, default=5)
    r.add_argument("--critical-per-round", type=int, default=8)
    r.add_argument("--seed", default="20261126")
    r.add_argument("--cap", type=float, default=15.0, help="seconds of covering tests per mutant (0: all)")
    r.add_argument("--resume", action="store_true", help="reuse the copy and its mutants (no regeneration)")
    sub.add_parser("report")
    f = sub.add_parser("fork-run")
    f.add_argument("--rounds", type=int, default=3)
    f.add_argument("--start-round", type=int, default=1)
    f.add_argument("--per-round", type=int, default=3)
    f.add_argument("--critical-per-round", type=int, default=5)
    f.add_argument("--seed", default="20261126")
    f.add_argument("--honour-stop", action="store_true")
    sub.add_parser("summary")
    c = sub.add_parser("confirm")
    c.add_argument("name")
    c.add_argument("tests", nargs="*")
    c.add_argument("--auto", action="store_true", help="add the covering tests of the run")
    c.add_argument("--sync", action="store_true")
    a = ap.parse_args()
    {"run": run, "report": report, "confirm": confirm, "summary": summary, "fork-run": fork_run}[a.cmd](a)


if __name__ == "__main__":
    main()
