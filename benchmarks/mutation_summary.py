"""The summary of ``benchmarks/mutation_fast.py``'s runs (issue 27): per core module, the sampled mutants' verdicts,
the judged survivors (``benchmarks/mutation_core_survivors.py``), the recheck of crash kills, and the kill rate over
the non-equivalent mutants with its exact 95% interval -> ``benchmarks/mutation_results_core.json`` and the table of
``docs/testing.md``. Run as ``python -m benchmarks.mutation_fast summary [--only ...] [--results ...]``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.mutation_core import clopper_pearson


def lower_bound_one_sided(k: int, n: int, generated: int, sampled: int) -> float:
    """The exact one-sided 95% lower confidence bound of a module's kill rate over its non-equivalent mutants:
    Clopper-Pearson's (``beta.ppf(0.05, k, n - k + 1)``: the rate p with P(at least k kills of n | p) = 0.05;
    k = n: 0.05^(1/n), so 59 killed of 59 bound it at 0.9505). A sample drawn without replacement from a finite
    module is a hypergeometric draw, whose bound is higher: the binomial one is the conservative side. A module
    whose every mutant was run (``sampled == generated``) has its rate itself, not an estimate."""
    from scipy.stats import beta  # noqa: PLC0415 (the test extra)

    if n == 0:
        return 0.0
    if sampled == generated:
        return k / n
    return 0.0 if k == 0 else float(beta.ppf(0.05, k, n - k + 1))


def summary(
    args: argparse.Namespace,
    *,
    results: Path,
    recheck_name: str,
    metas: dict[str, list[str]],
    root: Path,
    selection: list[str],
    markers: str,
) -> None:
    """``fast.json`` (or ``--results``: several, merged) + the judged survivors -> the results file and the table."""
    from benchmarks.mutation_core_survivors import ASSERTED_BY, EQUIVALENT, KILLED_BY  # noqa: PLC0415

    # --results: several runs' fast.json (parallel runs on disjoint modules, each with its fast.recheck.json beside)
    paths = [Path(p) for p in args.results] if args.results else [results]
    done, rechecked = {}, {}
    for path in paths:
        done.update(json.loads(path.read_text()))
        if (path.parent / recheck_name).exists():
            rechecked.update(json.loads((path.parent / recheck_name).read_text()))
    rows = {}
    keys = (
        "sampled",
        "first",
        "assert",
        "crash",
        "timeout",
        "rerun",
        "equivalent",
        "closed",
        "open",
        "rechecked",
        "recheck_assert",
        "asserted_by_new_tests",
        "recheck_crash_only",
    )
    tot = dict.fromkeys(keys, 0)
    only = tuple(getattr(args, "only", None) or ())
    for m in sorted(metas):
        if only and not m.startswith(only):
            continue
        res = {k: v for k, v in done.items() if v["module"] == m}
        if not res:
            continue
        first = [k for k, v in res.items() if v.get("first_run", v)["status"] in ("killed", "timeout")]
        rerun_k = [k for k, v in res.items() if "first_run" in v and v["status"] in ("killed", "timeout")]
        surv = [k for k, v in res.items() if v["status"] in ("survived", "no tests")]
        eq = [n for n in surv if n in EQUIVALENT]
        closed = [n for n in surv if n in KILLED_BY]
        open_ = [n for n in surv if n not in EQUIVALENT and n not in KILLED_BY]
        # an assertion of the test (pytest's Failed: "DID NOT RAISE", pytest.fail) or a crash (any other exception)
        assert_k = [k for k in first if res[k].get("first_run", res[k]).get("exc") in ("AssertionError", "Failed")]
        timeouts = [k for k in first if res[k].get("first_run", res[k])["status"] == "timeout"]
        # the crash kills rechecked against every covering test (``recheck``): caught by an assertion there, or
        # given a property test since (ASSERTED_BY), or caught by crashes only
        rech = [n for n in res if n in rechecked]
        rech_assert = [n for n in rech if rechecked[n].get("n_by_assertion", 0) > 0]
        rech_new = [n for n in rech if n not in rech_assert and n in ASSERTED_BY]
        rech_crash = [n for n in rech if n not in rech_assert and n not in ASSERTED_BY]
        nonequiv = len(res) - len(eq)
        k = nonequiv - len(open_)
        lo, hi = clopper_pearson(k, nonequiv)
        rows[m] = {
            "generated": len(metas[m]),
            "sampled": len(res),
            "killed_first_run": len(first),
            "of_which_by_assertion": len(assert_k),
            "of_which_timeout": len(timeouts),
            "killed_uncapped_rerun": len(rerun_k),
            "equivalent": len(eq),
            "killed_by_new_tests": len(closed),
            "open": open_,
            "non_equivalent_killed": k,
            "non_equivalent": nonequiv,
            "kill_rate_non_equivalent": k / nonequiv if nonequiv else None,
            "ci95": [round(lo, 3), round(hi, 3)],
            "every_mutant_run": len(res) == len(metas[m]),
            "lower95_one_sided": round(lower_bound_one_sided(k, nonequiv, len(metas[m]), len(res)), 4),
            "equivalent_mutants": {n: EQUIVALENT[n] for n in eq},
            "closed_mutants": {n: KILLED_BY[n] for n in closed},
            "rechecked_crash_kills": len(rech),
            "recheck_by_assertion": len(rech_assert),
            "recheck_asserted_by_new_tests": {n: ASSERTED_BY[n] for n in rech_new},
            "recheck_crash_only": rech_crash,
        }
        for key, v in (
            ("sampled", len(res)),
            ("first", len(first)),
            ("assert", len(assert_k)),
            ("crash", len(first) - len(assert_k) - len(timeouts)),
            ("timeout", len(timeouts)),
            ("rerun", len(rerun_k)),
            ("equivalent", len(eq)),
            ("closed", len(closed)),
            ("open", len(open_)),
            ("rechecked", len(rech)),
            ("recheck_assert", len(rech_assert)),
            ("asserted_by_new_tests", len(rech_new)),
            ("recheck_crash_only", len(rech_crash)),
        ):
            tot[key] += v
    nonequiv = tot["sampled"] - tot["equivalent"]
    lo, hi = clopper_pearson(nonequiv - tot["open"], nonequiv)
    cpu = [v["cpu"] for v in done.values() if v["status"] != "no tests"]
    out = {
        "tool": "mutmut 3.8.1 mutants, run by benchmarks/mutation_fast.py",
        "seed": args.seed,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "selection": selection,
        "markers": markers,
        "cpu_seconds_per_mutant_mean": round(sum(cpu) / len(cpu), 2) if cpu else None,
        "totals": {**tot, "non_equivalent": nonequiv, "ci95": [round(lo, 4), round(hi, 4)]},
        "modules": rows,
    }
    if not args.only:  # a group's table only prints
        (root / "benchmarks" / "mutation_results_core.json").write_text(json.dumps(out, indent=1) + "\n")
    print(
        "| module | mutants | sampled | killed first run (by assertion; timeouts) | equivalent | killed by new tests "
        "| open | non-equivalent killed | 95% CI | one-sided 95% lower bound (every mutant run: the rate) "
        "| crash kills rechecked: by an assertion / new test / crash only |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|")
    for m, r in rows.items():
        rate = r["kill_rate_non_equivalent"]
        print(
            f"| `{m.removeprefix('transforms/core/')}` | {r['generated']} | {r['sampled']} | "
            f"{r['killed_first_run']} ({r['of_which_by_assertion']}; {r['of_which_timeout']}) | "
            f"{r['equivalent']} | {r['killed_by_new_tests']} | {len(r['open'])} | "
            f"{r['non_equivalent_killed']}/{r['non_equivalent']} ({'-' if rate is None else f'{100 * rate:.0f}%'}) | "
            f"{100 * r['ci95'][0]:.0f}-{100 * r['ci95'][1]:.0f}% | "
            f"{100 * r['lower95_one_sided']:.1f}%{' (all)' if r['every_mutant_run'] else ''} | "
            + (
                f"{r['rechecked_crash_kills']}: {r['recheck_by_assertion']} / "
                f"{len(r['recheck_asserted_by_new_tests'])} / {len(r['recheck_crash_only'])} |"
                if r["rechecked_crash_kills"]
                else "- |"
            )
        )
    low = [m for m, r in rows.items() if r["lower95_one_sided"] < 0.95]
    print(out["totals"], out["cpu_seconds_per_mutant_mean"])
    print(f"modules whose one-sided 95% lower bound is below 95%: {len(low)} of {len(rows)}", *low)
