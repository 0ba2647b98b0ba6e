"""The registry-wide privacy contract (issue 27's matrix) for open keys (issue 33): the open-key release
is not a ``ContinualRelease`` over a ``DynamicConfig`` (its input is ``(person, update)`` pairs of keys
nobody declared, its parameters a ``SelectionParams``), so ``transforms/core/mechanisms.py`` cannot
describe it and the registry-wide tests do not reach it; this file makes the same four checks for it,
each with a twin that fails:

1. the exact privacy loss of the whole release (selection counters and answers) on adversarial
   neighbours, for every supported budget kind, within the stated guarantee;
2. the selection event (a key only the extra person has is released) has probability at most its
   stated delta;
3. the released answers are within their stated error bounds (statistical, false-failure rate stated);
4. the published figures (stated guarantee, ledger charges, counters' budgets) equal the configured ones.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

from transforms.core.continual.net_change import choose_counter
from transforms.core.contribution.loss import Draw, privacy_loss
from transforms.core.counters import make_counter
from transforms.core.counters.factorization import LATTICE_BITS
from transforms.core.foundation.accounting import ApproxDP, PureDP, rho_for_approx
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.samplers import discrete_gaussian_pmf, discrete_laplace_pmf
from transforms.core.selection import (
    KeyLimit,
    OpenKeyRelease,
    PersonKeys,
    SelectionParams,
    answer_budget,
    dyadic_nodes,
    selection_guarantee,
)
from transforms.core.selection.candidate import select_coords
from transforms.core.static.linear import CountMechanism

H, K, L, k = 8, 2, 3, 2
BUDGETS = [PureDP(1.0), ApproxDP(1.0, 1e-6)]


# -- 1. exact privacy loss of the whole release ----------------------------------------------------


def _streams(stream, limit: KeyLimit) -> tuple[dict, dict]:
    """({key: {period: contributor change}}, {key: {period: entry change}})."""
    pk, live, ent = PersonKeys(limit), {}, {}
    for p, ups in enumerate(stream, 1):
        for key, d_live, d_entries in pk.decide_tick(p, ups)[2]:
            for out, d in ((live, d_live), (ent, d_entries)):
                out.setdefault(key, {})
                out[key][p] = out[key].get(p, 0) + d
    return live, ent


def _selection_draws(live: dict, keys, params: SelectionParams) -> dict:
    out = {}
    for key in keys:
        ch = live.get(key, {})
        for lvl in range(params.levels):
            for j in range(1, ((H - 1) >> lvl) + 2):
                lo, hi = (j - 1) << lvl, j << lvl
                c = select_coords(key, lvl, j)
                v = sum(d for p, d in ch.items() if lo < p <= hi)
                out[c] = Draw(c, params.selection_noise, Fraction(params.node_param(lvl)), (v,))
    return out


def _answer_draws(ent: dict, schedule: dict, params, limit, budget) -> dict:
    """The selected keys' counters for the fixed selection ``schedule`` (adaptive composition: the answers
    are private for every schedule), built as ``OpenKeyRelease`` builds them, noise off: pre-noise values."""
    kind, out = params.noise_kind, {}
    for key, start in schedule.items():
        horizon = H - start + 1  # as OpenKeyRelease builds a key's counter
        name = choose_counter(kind, horizon)
        counter = make_counter(
            name, CountMechanism(1, kind), budget, horizon=horizon, coords=("open_keys", "answer", key)
        )
        counter.release_log = []
        ch = ent.get(key, {})
        for p in range(start, H + 1):
            v = sum(d for q, d in ch.items() if q <= start) if p == start else ch.get(p, 0)
            counter.step(np.array([v], dtype=np.int64), NoiseSource.disabled())
        if hasattr(counter, "noise_param"):
            kind, scale, unit = counter.noise_kind, counter.noise_param, counter.unit / float(1 << LATTICE_BITS)
        else:
            ((kind, scale, unit),) = counter.mechanism.noise_profile(counter.node_budget).terms
        for coords, _, values in counter.release_log:
            lat = tuple(int(x) for x in np.rint(np.asarray(values, dtype=np.float64) / unit))
            out[tuple(coords)] = Draw(tuple(coords), kind, Fraction(scale), lat)
    return out


def _base():
    base = [[] for _ in range(H)]
    for i, (person, key) in enumerate((("p1", "A"), ("p2", "A"), ("p3", "B"), ("p4", "B"))):
        base[i % 3].append((person, Update("insert", f"{person}e", (key,))))
    base[5].append(("p2", Update("delete", "p2e")))
    return base


def _keys_nobody_has(n_keys: int):
    extra = [[] for _ in range(H)]
    for e in range(L):
        extra[e % 2].append(("X", Update("insert", f"x{e}", (f"only{e % n_keys}",))))
        extra[4].append(("X", Update("delete", f"x{e}")))
    return extra


def _adds_to_existing():
    extra = [[] for _ in range(H)]
    for e in range(L):
        extra[1].append(("X", Update("insert", f"x{e}", ("A",))))
        extra[3 + e].append(("X", Update("upsert", f"x{e}", ("B",))))
    return extra


def _at_the_ends():
    """Mutations at the first and last periods (a counter's first batch and its last release)."""
    extra = [[] for _ in range(H)]
    extra[0].append(("X", Update("insert", "x0", ("A",))))
    extra[H - 1].append(("X", Update("delete", "x0")))
    extra[H - 1].append(("X", Update("insert", "x1", ("only0",))))
    extra[H - 2].append(("X", Update("insert", "x2", ("B",))))
    extra[H - 1].append(("X", Update("upsert", "x2", ("only0",))))
    return extra


ADVERSARIES = {
    "K keys nobody has": _keys_nobody_has(K),
    "adds to existing keys": _adds_to_existing(),
    "at the ends": _at_the_ends(),
}
SCHEDULES = ({"A": 1, "B": 1, "only0": 1, "only1": 1}, {"A": 2, "B": 4, "only0": H, "only1": 3})


def _whole_loss(extra, params, limit, schedule, budget=None):
    with_person = [b + e for b, e in zip(_base(), extra)]
    (la, ea), (lb, eb) = _streams(with_person, limit), _streams(_base(), limit)
    keys = sorted(set(la) | set(lb), key=repr)
    sel = privacy_loss(_selection_draws(la, keys, params), _selection_draws(lb, keys, params))
    ab = answer_budget(params, limit) if budget is None else budget
    ans = privacy_loss(_answer_draws(ea, schedule, params, limit, ab), _answer_draws(eb, schedule, params, limit, ab))
    return sel, ans


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("adversary", sorted(ADVERSARIES))
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_whole_release_exact_loss_within_the_stated_guarantee(budget, adversary, schedule):
    params, limit = SelectionParams(budget, K, horizon=H, test="tree"), KeyLimit(K, L, k)
    sel, ans = _whole_loss(ADVERSARIES[adversary], params, limit, schedule)
    assert sel.differing > 0 and ans.differing > 0
    stated = selection_guarantee(budget, params.selection_share, K, L, k, failure=params.failure)
    if isinstance(budget, PureDP):  # the eps of the stated (eps, delta_event): Laplace parts add
        assert sel.epsilon + ans.epsilon <= stated.epsilon * (1 + 1e-9)
    else:  # each part within its (eps, delta) share, composed: the counters calibrate in zCDP inside them
        assert sel.rho <= rho_for_approx(params.counter_budget) * (1 + 1e-9)
        assert ans.within(params.answers_budget)
        assert params.counter_budget.epsilon + params.answers_budget.epsilon == pytest.approx(stated.epsilon)
        assert params.selection_cost.delta + params.answers_budget.delta == pytest.approx(stated.delta)


@pytest.mark.parametrize("budget", BUDGETS)
def test_whole_release_twins_fail(budget):
    params = SelectionParams(budget, K, horizon=H, test="tree")
    # the key bound not enforced (the bounder lets 2K keys through): the selection overspends
    right = answer_budget(params, KeyLimit(K, L, k))
    sel, _ = _whole_loss(_keys_nobody_has(2 * K), params, KeyLimit(2 * K, L, k), SCHEDULES[0], budget=right)
    if isinstance(budget, PureDP):
        assert sel.epsilon > params.counter_budget.epsilon
    else:
        assert sel.rho > rho_for_approx(params.counter_budget)
    # the answers calibrated for one entry instead of the person (L): the answers overspend
    limit = KeyLimit(K, L, k)
    thin = answer_budget(params, KeyLimit(K, 1, k))
    _, ans = _whole_loss(_adds_to_existing(), params, limit, SCHEDULES[0], budget=thin)
    assert not ans.within(params.answers_budget)


# -- 2. the selection event ------------------------------------------------------------------------


def _p_zero_key_selected(params: SelectionParams) -> float:
    """An upper bound (tree: sum over periods of P(Z_p > T_p)) or the exact value (sparse vector) of the
    probability that a key with no contributor is ever selected, from the noise laws."""
    span = int(25 * math.sqrt(params.noise_profile(1).variance())) + 60
    z = np.arange(-span, span + 1)
    if params.selection_test == "svt":
        t_scale, q_scale = params.svt_scales
        rho_pmf = discrete_laplace_pmf(z, t_scale)
        q_pmf = discrete_laplace_pmf(z, q_scale)
        q_cdf = np.cumsum(q_pmf)
        never = 0.0
        for r, pr in zip(z, rho_pmf):  # selected at p when nu_p - r > T: P(never) = prod_p P(nu_p <= T + r)
            stay = 1.0
            for p in range(1, H + 1):
                idx = int(math.floor(params.threshold_at(p) + r)) + span
                stay *= float(q_cdf[min(max(idx, -1), len(z) - 1)]) if idx >= 0 else 0.0
            never += pr * stay
        return 1.0 - never
    total = 0.0
    for p in range(1, H + 1):
        pmf = np.array([1.0])
        for lvl, _ in dyadic_nodes(p):
            f = discrete_laplace_pmf if params.selection_noise == "laplace" else discrete_gaussian_pmf
            pmf = np.convolve(pmf, f(z, params.node_param(lvl)))
        vals = np.arange(len(pmf)) - span * len(dyadic_nodes(p))
        total += float(pmf[vals > params.threshold_at(p)].sum())
    return total


@pytest.mark.parametrize("budget", [PureDP(2.0), ApproxDP(2.0, 1e-3)])
@pytest.mark.parametrize("test", ["svt", "tree"])
def test_selection_event_within_the_stated_delta(budget, test):
    params = SelectionParams(budget, K, horizon=H, failure=1e-3, test=test)
    p_key = _p_zero_key_selected(params)
    assert 0 < p_key <= params.key_delta
    # the person's <= K keys nobody else has, through the coupling: e^eps_sel K p_key <= delta_event <= stated
    stated = selection_guarantee(budget, params.selection_share, K, L, k, failure=1e-3)
    assert math.exp(params.counter_budget.epsilon) * K * p_key <= params.event_delta <= stated.delta

    class Permissive(SelectionParams):  # a twin whose threshold is the tail bound at 200 x the event delta
        def threshold_at(self, q):
            return self.noise_profile(q).tail_bound(self.event_delta * 200)

    twin = Permissive(budget, K, horizon=H, failure=1e-3, test=test)
    assert math.exp(twin.counter_budget.epsilon) * K * _p_zero_key_selected(twin) > twin.event_delta


# -- 3. the answers within their stated bounds ----------------------------------------------------

BETA, RUNS, ALPHA = 0.1, 40, 1e-6


def _coverage(budget, shrink: float = 1.0) -> dict:
    """{(key, period): [violations, runs]}: |answer - truth| > bound + 1/2 (the answer is rounded), over
    independent keyed runs (the selection's noise and the counters' are drawn at different coordinates)."""
    params, limit = SelectionParams(budget, K, horizon=H, threshold=0, test="tree"), KeyLimit(K, L, k)
    stream = [b + e for b, e in zip(_base(), _adds_to_existing())]
    out: dict = {}
    for seed in range(RUNS):
        rel = OpenKeyRelease(params, limit, NoiseSource(bytes([seed + 1]) * 32))
        for p, ups in enumerate(stream, 1):
            answers, truth = rel.step(ups).answers, rel.truth()
            for key, ans in answers.items():
                bound = rel.selected[key].counter.error_bound(BETA) * shrink
                c = out.setdefault((key, p), [0, 0])
                c[0] += abs(ans - truth[key]) > bound + 0.5
                c[1] += 1
    return out


def _failing(cov: dict) -> list:
    """The checkpoints whose violations a valid bound reaches with probability <= ALPHA / checkpoints
    (each checkpoint's violations are at most Binomial(runs, BETA): exact one-sided test, Bonferroni)."""
    a = ALPHA / len(cov)
    return [c for c, (bad, n) in cov.items() if bad > binom.ppf(1 - a, n, BETA)]


@pytest.mark.statistical
@pytest.mark.parametrize("budget", BUDGETS)
def test_answers_within_their_stated_bounds(budget):
    # false-failure rate <= ALPHA = 1e-6 per budget (module of _failing)
    cov = _coverage(budget)
    assert sum(n for _, n in cov.values()) > 100
    assert _failing(cov) == []
    assert _failing(_coverage(budget, shrink=1 / 4))  # a twin that states a quarter of its bound


# -- 4. the published figures ----------------------------------------------------------------------


@pytest.mark.parametrize("budget", BUDGETS)
def test_published_figures_equal_the_configured_ones(budget):
    params, limit = SelectionParams(budget, K, horizon=H, failure=1e-8, threshold=0), KeyLimit(K, L, k)
    rel = OpenKeyRelease(params, limit, NoiseSource(bytes(32)))
    stated = selection_guarantee(budget, params.selection_share, K, L, k, failure=1e-8)
    assert rel.ledger.spent.vector() == pytest.approx(stated.vector(), rel=1e-12)
    recs = {r.coordinates: r.cost for r in rel.ledger.records}
    assert recs[("open_keys", "select")] == rel.ledger.budget.express(params.selection_cost)
    assert recs[("open_keys", "answers")] == rel.ledger.budget.express(params.answers_budget)
    assert rel.answer_budget == answer_budget(params, limit)
    stream = [b + e for b, e in zip(_base(), _adds_to_existing())]
    for ups in stream:
        rel.step(ups)
    assert rel.selected and all(s.counter.budget == answer_budget(params, limit) for s in rel.selected.values())
    if isinstance(budget, PureDP):  # a twin stating pure eps (the configured kind) would not match
        assert stated != budget and stated == ApproxDP(budget.epsilon, 1e-8)
