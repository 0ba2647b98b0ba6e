"""The bound-coverage contract (issue 27, item 3), over the whole mechanism registry.

For every registry entry and budget kind (pure, zCDP, (eps, delta)), over RUNS keyed runs of the
in-memory core on one random stream (insertions, and deletions where the entry takes them) with
the noise on, at beta = BETA:

* **coverage**: at every checkpoint (a tick and a query set), the number of runs whose error
  ``max |estimate - truth|`` exceeds the stated (1 - beta) bound is compared with
  Binomial(runs, beta) by an exact one-sided test at level ALPHA / checkpoints (Bonferroni): a valid
  bound fails a setting with probability <= ALPHA = 1e-4 (for a random choice of the keys; the keys
  are fixed, so the file is deterministic). The truth is computed from the stream itself, not by
  the mechanism.
* **not trivially large**: the median over checkpoints of ``bound / q``, ``q`` the empirical
  (1 - beta) quantile of the error, is at most MULTIPLE = 4. Measured (RUNS = 100, T = 8): 1.1 -
  3.2 (Chernoff and union bounds; the two-stream baseline's two (1 - beta/2) bounds the largest), so
  a bound inflated tenfold fails. The sampling error of a 0.75-quantile of 100 draws is a few per
  cent of it; the multiple does not fail by chance.

Broken twins (the checks must fail on them): the core's tail bound (``NoiseProfile.tail_bound``)
at 2 beta (beta where beta / 2 is owed; Laplace noise) and halved fail coverage; times ten fails
the multiple.
The default run covers every entry under one budget kind each (the kinds rotate over the registry
so each kind is run); the whole entry x budget-kind matrix is marked ``slow``.
"""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import privacy_harness as H
import pytest
from scipy import stats

from transforms.core import MECHANISMS, NoiseSource
from transforms.core.counters.factorization import kary
from transforms.core.foundation.accounting import PrivacyUnit
from transforms.core.foundation.bounds import NoiseProfile

BETA = 0.25
RUNS = 100
ALPHA = 1e-4
MULTIPLE = 4.0
# the growing families state a bound with their black box's accuracy term (PMW's alpha, the
# scheduler's growth slack) on top of the noise: measured 11 - 37x on this short stream (RUNS = 100,
# T = 8); a stated multiple of their own, which a tenfold inflation still exceeds
GROWING_MULTIPLE = 60.0
GROWING = {"bb_improver", "bb_scheduler", "pmwg"}
END_TICK = 8

UPDATE_ENTRIES = sorted(n for n, s in MECHANISMS.items() if s.input_kind == "updates")


def cases() -> list[tuple[str, str]]:
    out = []
    for name in UPDATE_ENTRIES:
        for kind in H.budgets_by_kind(MECHANISMS[name]):
            out.append((name, kind))
    return out


def default_cases() -> list[tuple[str, str]]:
    """One budget kind per entry, rotating (every entry and every kind is run)."""
    out = []
    for i, name in enumerate(UPDATE_ENTRIES):
        kinds = list(H.budgets_by_kind(MECHANISMS[name]))
        out.append((name, kinds[i % len(kinds)]))
    return out


def truth_by_tick(batches, queries, end_tick: int) -> dict:
    """(tick, query name) -> the exact answer vector of the data alive at the end of the tick."""
    alive: dict[str, tuple] = {}
    out, pos = {}, 0
    for t in range(1, end_tick + 1):
        while pos < len(batches) and batches[pos][0] == t:
            for u in batches[pos][1]:
                if u.op == "delete":
                    alive.pop(u.entry_id, None)
                else:
                    alive[u.entry_id] = u.item
            pos += 1
        for j, q in enumerate(queries):
            if q.kind == "count":
                out[t, q.name] = np.array([len(alive)], dtype=float)
                continue
            hist = np.zeros(q.domain_size)
            for item in alive.values():
                hist[item[j]] += 1
            out[t, q.name] = hist if q.kind == "histogram" else np.asarray(q.matrix, dtype=float) @ hist
    return out


def coverage_runs(name: str, kind: str, runs: int = RUNS) -> dict:
    """checkpoint (tick, query) -> (errors, bounds) over the runs that answered there."""
    spec = MECHANISMS[name]
    setting = H.Setting(name, H.budgets_by_kind(spec)[kind], PrivacyUnit.update(), end_tick=END_TICK)
    setting.check()
    config = dataclasses.replace(setting.config(), beta=BETA)
    batches = H.merge(H.background(END_TICK, deletions=spec.deletions_allowed, seed=7))
    truth = truth_by_tick(batches, setting.queries, END_TICK)
    out: dict = {}
    for r in range(runs):
        key = hashlib.sha256(f"bound-coverage/{name}/{kind}/{r}".encode()).digest()
        _, results, rejected = H.drive(setting, batches, NoiseSource(key), lambda: setting.build(config))
        assert not rejected
        for a in results:
            for ans in a.answers:
                exact = truth[min(ans.tick, END_TICK), ans.query]  # no update after the end
                err = float(np.max(np.abs(np.asarray(ans.estimate, dtype=float) - exact)))
                errs, bounds = out.setdefault((ans.tick, ans.query), ([], []))
                errs.append(err)
                bounds.append(float(ans.error_bound))
    return out


def coverage_problems(runs: dict, beta: float = BETA, runs_total: int = RUNS) -> list[str]:
    problems = []
    level = ALPHA / max(1, len(runs))
    for cp, (errs, bounds) in sorted(runs.items()):
        if len(errs) < runs_total // 4:  # a checkpoint few runs reach (a noise-dependent schedule)
            continue
        k = int(np.sum(np.asarray(errs) > np.asarray(bounds)))
        p = stats.binomtest(k, len(errs), beta, alternative="greater").pvalue
        if p < level:
            problems.append(f"{cp}: {k}/{len(errs)} runs exceed the (1 - {beta}) bound (p = {p:.2g})")
    return problems


def looseness(runs: dict, beta: float = BETA) -> float:
    """The median over checkpoints of the stated bound over the empirical (1 - beta) quantile."""
    ratios = []
    for errs, bounds in runs.values():
        q = float(np.quantile(errs, 1 - beta))
        if q > 0 and len(errs) >= 20:
            ratios.append(float(np.median(bounds)) / q)
    assert ratios, "no checkpoint with a positive error quantile"
    return float(np.median(ratios))


def check(name, kind):
    runs = coverage_runs(name, kind)
    assert runs, f"{name} released nothing in {END_TICK} ticks"
    problems = coverage_problems(runs)
    ratio = looseness(runs)
    assert not problems, problems
    assert ratio <= (GROWING_MULTIPLE if name in GROWING else MULTIPLE), (
        f"the bound is {ratio:.2f}x the empirical (1 - beta) quantile"
    )
    return ratio


@pytest.mark.statistical
@pytest.mark.parametrize(("name", "kind"), default_cases(), ids=str)
def test_stated_bound_covers_and_is_not_trivially_large(name, kind):
    check(name, kind)


@pytest.mark.slow
@pytest.mark.statistical
@pytest.mark.parametrize(("name", "kind"), [c for c in cases() if c not in default_cases()], ids=str)
def test_stated_bound_covers_every_budget_kind(name, kind):
    check(name, kind)


def test_default_cases_run_every_entry_and_every_budget_kind():
    d = default_cases()
    assert {n for n, _ in d} == set(UPDATE_ENTRIES)
    assert {k for _, k in d} == set(H.BUDGET_KINDS)


# ---------------------------------------------------------------------------------------------
# broken twins
# ---------------------------------------------------------------------------------------------

TWIN_CASES = [("net_change", "pure"), ("dcr", "zcdp")]
# beta where beta / 2 is owed: detectable where the bound is the tight Laplace tail (pure); a
# sub-Gaussian tail at 2 beta is still a valid (1 - beta) bound for Gaussian noise (sqrt(2 log(1/beta))
# exceeds the exact quantile), so no coverage test can fail on it there
PURE_TWIN_CASES = [("net_change", "pure"), ("hdcr", "pure")]


def _patch_tail_bound(monkeypatch, how):
    real = NoiseProfile.tail_bound
    monkeypatch.setattr(NoiseProfile, "tail_bound", lambda self, beta: how(real, self, beta))
    # the Honaker k-ary tree computes its bounds by blocks of periods (kary._block_bounds, cached, through
    # bounds.tail_bounds), not through NoiseProfile.tail_bound: the same twin there, uncached
    block = kary._block_bounds.__wrapped__

    def twin_block(levels, radices, horizon, beta, index):
        return how(lambda _self, b: block(levels, radices, horizon, b, index), None, beta)

    monkeypatch.setattr(kary, "_block_bounds", twin_block)


@pytest.mark.statistical
@pytest.mark.parametrize(("name", "kind"), PURE_TWIN_CASES, ids=str)
def test_twin_beta_where_half_is_owed_fails_coverage(monkeypatch, name, kind):
    _patch_tail_bound(monkeypatch, lambda real, self, beta: real(self, min(0.99, 2 * beta)))
    assert coverage_problems(coverage_runs(name, kind))


@pytest.mark.statistical
@pytest.mark.parametrize(("name", "kind"), TWIN_CASES, ids=str)
def test_twin_halved_bound_fails_coverage(monkeypatch, name, kind):
    _patch_tail_bound(monkeypatch, lambda real, self, beta: real(self, beta) / 2)
    assert coverage_problems(coverage_runs(name, kind))


@pytest.mark.statistical
def test_twin_tenfold_bound_fails_the_multiple(monkeypatch):
    _patch_tail_bound(monkeypatch, lambda real, self, beta: real(self, beta) * 10)
    runs = coverage_runs("net_change", "zcdp")
    assert not coverage_problems(runs)
    assert looseness(runs) > MULTIPLE
