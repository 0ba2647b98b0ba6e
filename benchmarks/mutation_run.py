"""Privacy and bound mutants of the core against the privacy contracts (issue 27, item 7).

Each mutant is a hand-written, realistic bug of the kind the issue lists (a calibration off by a
factor, a split skipped, a group factor dropped, a bound that forgets a term or uses beta where beta/2
is owed, a rounding the wrong way). For each, on a copy of the repository (nothing here changes), the
mutant is applied and the contract tests of its kind run (privacy: ``tests/test_privacy_contract.py``
and ``tests/test_published_figures.py``; bound: ``tests/test_bound_coverage.py`` and
``tests/test_bounds_reference.py``; the twins left out; ``-x``, one process). A mutant is

* ``killed`` when a test fails on an ``AssertionError`` (the property: a loss over the guarantee, a
  coverage or figure check), recorded with the first failing test;
* ``crashed`` when the first failure is another exception (a crash is not a property kill);
* ``survived`` when every test passes.

Prints the kill rate per module (killed / non-equivalent mutants) and writes
``benchmarks/results/mutation_run.json``. Run: ``.venv/bin/python -m benchmarks.mutation_run`` (about
20 - 40 s of CPU per mutant on an idle machine; ``--only SUBSTRING`` runs the mutants whose id contains it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the contract tests each kind of mutant answers to (the twins, which patch the code themselves, left out)
TESTS = {
    "privacy": ["tests/test_privacy_contract.py", "tests/test_published_figures.py"],
    "bound": ["tests/test_bound_coverage.py", "tests/test_bounds_reference.py"],
}
BUDGETS = "transforms/core/foundation/accounting/budgets.py"
UNITS = "transforms/core/foundation/accounting/units.py"
CALIBRATION = "transforms/core/foundation/accounting/calibration.py"
BOUNDS = "transforms/core/foundation/bounds.py"
LINEAR = "transforms/core/static/linear.py"
LATTICE = "transforms/core/counters/factorization/lattice.py"
COUNTERS = "transforms/core/counters/base.py"
CHANGELOG = "transforms/core/families/changelog/releases.py"
RR = "transforms/core/families/rr_client.py"

# (id, kind, module, old, new): ``old`` must occur exactly once in ``module``
MUTANTS = [
    ("pure-for-sensitivity", "privacy", BUDGETS, "return PureDP(self.epsilon / ratio)", "return PureDP(self.epsilon)"),
    ("pure-ungroup", "privacy", BUDGETS, "return PureDP(self.epsilon / g)", "return PureDP(self.epsilon)"),
    ("zcdp-for-sensitivity", "privacy", BUDGETS, "return ZCDP(self.rho / ratio**2)", "return ZCDP(self.rho / ratio)"),
    ("zcdp-ungroup", "privacy", BUDGETS, "return ZCDP(self.rho / (g * g))", "return ZCDP(self.rho / g)"),
    (
        "approx-ungroup-delta",
        "privacy",
        BUDGETS,
        "return ApproxDP(e, self.delta / (g * math.exp((g - 1) * e)))",
        "return ApproxDP(e, self.delta / g)",
    ),
    ("group-size", "privacy", UNITS, "g = 2 * self.max_mutations - 1", "g = self.max_mutations"),
    (
        "cks-log-delta",
        "privacy",
        CALIBRATION,
        "return alpha * rho + (math.log(1 / delta) +",
        "return alpha * rho + (math.log(1 / delta) / 2 +",
    ),
    ("static-laplace-scale", "privacy", LINEAR, "as_ratio_up(self.l1 / eps)", "as_ratio_up(self.l1 / (4 * eps))"),
    (
        "static-gaussian-variance",
        "privacy",
        LINEAR,
        "as_ratio_up(self.l2**2 / (2 * rho))",
        "as_ratio_up(self.l2**2 / (4 * rho))",
    ),
    (
        "lattice-laplace-scale",
        "privacy",
        LATTICE,
        "p = as_ratio_up(Fraction(self._tab.s1) * l1 / Fraction(eps))",
        "p = as_ratio_up(Fraction(self._tab.s1) * l1 / Fraction(4 * eps))",
    ),
    (
        "lattice-gaussian-variance",
        "privacy",
        LATTICE,
        "p = as_ratio_up(Fraction(self._tab.n2) * l2sq / (2 * Fraction(rho)) + extra)",
        "p = as_ratio_up(Fraction(self._tab.n2) * l2sq / (4 * Fraction(rho)) + extra)",
    ),
    (
        "changelog-fold",
        "privacy",
        CHANGELOG,
        "self.node_budget = share.scale(1.0 / self.total_fold)",
        "self.node_budget = share.scale(2.0 / self.total_fold)",
    ),
    (
        "rr-delta-split",
        "privacy",
        RR,
        "return cls(domain_size, epsilon / f, delta / f, constraint, layers, branching)",
        "return cls(domain_size, epsilon / f, delta, constraint, layers, branching)",
    ),
    (
        "rr-epsilon-split",
        "privacy",
        RR,
        "return cls(domain_size, epsilon / f, delta / f, constraint, layers, branching)",
        "return cls(domain_size, epsilon / (f - 1 or 1), delta / f, constraint, layers, branching)",
    ),
    ("tail-beta-half", "bound", BOUNDS, "log2b = math.log(2 / beta)", "log2b = math.log(1 / beta)"),
    (
        "tail-laplace-exact-beta",
        "bound",
        BOUNDS,
        "k = math.ceil(math.log(beta * (1 + q) / 2) / math.log(q))",
        "k = math.ceil(math.log(beta * (1 + q)) / math.log(q))",
    ),
    (
        "tail-laplace-round-down",
        "bound",
        BOUNDS,
        "k = math.ceil(math.log(beta * (1 + q) / 2) / math.log(q))",
        "k = math.floor(math.log(beta * (1 + q) / 2) / math.log(q)) - 1",
    ),
    (
        "tail-gaussian-forgets-term",
        "bound",
        BOUNDS,
        "return math.sqrt(2 * gvar * log2b)",
        "return math.sqrt(gvar * log2b)",
    ),
    (
        "counter-bound-union",
        "bound",
        COUNTERS,
        "return self.noise_profile().tail_bound(beta / self.mechanism.num_queries)",
        "return self.noise_profile().tail_bound(beta)",
    ),
]


def copy_repo(dest: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for f in files:
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def first_failure(output: str) -> tuple[str | None, str | None]:
    """(test id, exception type) of the first failure in a ``pytest -x -q`` output."""
    test = re.search(r"^FAILED (\S+)", output, re.M)
    exc = re.search(r"^E\s+(\w+(?:\.\w+)*(?:Error|Exception|Exceeded|Failed))\b", output, re.M)
    return (test.group(1) if test else None), (exc.group(1) if exc else None)


def run_mutant(work: Path, mutant, python: str, select: str = "") -> dict:
    mid, kind, module, old, new = mutant
    path = work / module
    source = path.read_text()
    if source.count(old) != 1:
        return {"id": mid, "kind": kind, "module": module, "verdict": "not-applicable"}
    path.write_text(source.replace(old, new))
    t0 = time.time()
    try:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTHONPATH", None)
        proc = subprocess.run(
            [python, "-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:randomly", "-p", "no:cacheprovider"]
            + ["-m", "not slow", "-k", f"not twin{' and (' + select + ')' if select else ''}", *TESTS[kind]],
            cwd=work,
            capture_output=True,
            text=True,
            env=env,
            timeout=1800,
        )
    finally:
        path.write_text(source)
    test, exc = first_failure(proc.stdout)
    if proc.returncode == 0:
        verdict = "survived"
    elif exc in (None, "AssertionError", "assert"):
        verdict = "killed"
    else:
        verdict = "crashed"
    return {
        "id": mid,
        "kind": kind,
        "module": module,
        "verdict": verdict,
        "test": test,
        "exception": exc,
        "seconds": round(time.time() - t0, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="run the mutants whose id contains this")
    ap.add_argument("--python", default=str(ROOT / ".venv/bin/python"))
    ap.add_argument("-k", dest="select", default="", help="a pytest -k expression the tests must also match")
    args = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if args.only in m[0]]
    results = []
    with tempfile.TemporaryDirectory(prefix="mutation_run_") as tmp:
        work = Path(tmp)
        copy_repo(work)
        where = subprocess.run(
            [args.python, "-c", "import transforms; print(transforms.__file__)"],
            cwd=work,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not where.startswith(str(work)):
            raise SystemExit(f"the copy imports transforms from {where}, not from {work}")
        for m in chosen:
            r = run_mutant(work, m, args.python, args.select)
            results.append(r)
            print(f"{r['verdict']:15s} {r['id']:28s} {r.get('test') or ''} {r.get('exception') or ''}", flush=True)
    by_module: dict[str, list] = {}
    for r in results:
        by_module.setdefault(r["module"], []).append(r)
    print()
    for module, rs in sorted(by_module.items()):
        live = [r for r in rs if r["verdict"] != "not-applicable"]
        killed = sum(r["verdict"] == "killed" for r in live)
        print(f"{module}: {killed}/{len(live)} killed by a property assertion")
    out = ROOT / "benchmarks" / "results" / "mutation_run.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
