"""Properties of the randomized-response collector that only a golden file checked in the fast tier (issue 27:
privacy and bound mutants killed by an assertion on the property, not by a golden file).

Round 44's mutants of ``local_dp.py`` / ``rr_client.py`` that only
``test_local_dp.py::test_golden_collector_state_restores_and_continues_identically`` killed among the fast tests (the
statistical tests that also catch some of them do not run in that tier): the report map (``randomize__mutmut_10``),
the node estimate (``node_estimate__mutmut_3``), the variance (``variance_estimate__mutmut_19/23/25/29``), the
Bernstein bound (``bernstein_bound__mutmut_6``), the collector's sums over the c-ary decomposition
(``_release__mutmut_31/34``) and the in-memory reference (``in_memory__mutmut_15``). Each test below computes the
property exactly from the response matrix (no sampling): the mutant fails it by an assertion."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from transforms.core import DynamicConfig, PureDP, QuerySet
from transforms.core.families.local_dp import (
    RandomizedResponseCollector,
    RROptions,
    bernstein_bound,
    in_memory,
    node_counts,
    node_estimate,
    variance_estimate,
)
from transforms.core.families.rr_client import AtMostK, Report, SurveyDesign, mutation_of, randomize, symbol_of

DESIGNS = [(2, 1.0), (3, 0.7), (4, 2.5)]


def _design(z, eps):
    return SurveyDesign(z, eps, 0.0, AtMostK(1))


def _effect(s, z):
    """The change a mutation symbol makes to each cell (-1, 0, 1)."""
    old, new = mutation_of(s, z)
    e = [0] * z
    if old != new:
        if new is not None:
            e[new] += 1
        if old is not None:
            e[old] -= 1
    return e


def _response(d, s):
    """P(report = r | true symbol s), exact (Fractions)."""
    m = d.num_symbols
    return [Fraction(d.p) if r == s else Fraction(d.q) for r in range(m)]


@pytest.mark.parametrize("z, eps", DESIGNS)
def test_randomize_maps_the_other_words_onto_every_other_symbol_once(z, eps):
    """randomize__mutmut_10: the 64-bit words above the keep weight fall in m - 1 bins of the other weight, and bin
    j must report the j-th symbol other than the truth, so that each other symbol has probability q exactly and the
    response matrix is the one whose ratio p / q the guarantee states (a bin reported twice, or the truth reported
    from a bin, breaks the local guarantee)."""
    d = _design(z, eps)
    m = d.num_symbols
    for s in range(m):
        assert randomize(s, d, lambda _b: 0) == s and randomize(s, d, lambda _b: d.keep_weight - 1) == s
        seen = []
        for j in range(m - 1):
            lo = d.keep_weight + j * d.other_weight
            first, last = randomize(s, d, lambda _b, u=lo: u), randomize(s, d, lambda _b, u=lo: u + d.other_weight - 1)
            assert first == last
            seen.append(first)
        assert sorted(seen) == [r for r in range(m) if r != s], (s, seen)


@pytest.mark.parametrize("z, eps", DESIGNS)
def test_the_node_estimate_of_the_expected_reports_is_the_true_change(z, eps):
    """node_estimate__mutmut_3: the estimate is unbiased: applied to the expected counts of one report (the response
    matrix times the symbols' effects), it gives back the true mutation's effect on every cell, exactly."""
    d = _design(z, eps)
    m = d.num_symbols
    for s in range(m):
        expected = [sum(pr * _effect(r, z)[c] for r, pr in enumerate(_response(d, s))) for c in range(z)]
        est = node_estimate([float(x) for x in expected], d)
        assert est == pytest.approx(_effect(s, z), abs=1e-12), (s, est)


def _exact_cell_variance(d, s, c):
    """Var of one report's contribution (its effect on cell c over p - q), exactly."""
    gap = Fraction(d.p) - Fraction(d.q)
    pr = _response(d, s)
    mean = sum(p * Fraction(_effect(r, d.domain_size)[c]) / gap for r, p in enumerate(pr))
    return sum(p * (Fraction(_effect(r, d.domain_size)[c]) / gap - mean) ** 2 for r, p in enumerate(pr)), mean


@pytest.mark.parametrize("z, eps", DESIGNS)
@pytest.mark.parametrize("n, a", [(10, 0), (10, 4), (50, 50), (7, 3)])
def test_the_variance_at_the_expected_touches_is_the_exact_variance_of_the_reports(z, eps, n, a):
    """variance_estimate__mutmut_19/23/25/29: with ``a`` of ``n`` reports from entries whose true mutation changes
    cell 0 and the touch count at its expectation, the variance the release states is the exact variance of the
    cell's estimate (the sum of the reports' exact variances from the response matrix)."""
    d = _design(z, eps)
    m = d.num_symbols
    touching = next(s for s in range(m) if _effect(s, z)[0] != 0)
    idle = next(s for s in range(m) if _effect(s, z) == [0] * z)
    exact = a * _exact_cell_variance(d, touching, 0)[0] + (n - a) * _exact_cell_variance(d, idle, 0)[0]

    def touches(s):
        return sum(p for r, p in enumerate(_response(d, s)) if _effect(r, z)[0] != 0)

    expected_touch = a * touches(touching) + (n - a) * touches(idle)
    got = variance_estimate(d, n, float(expected_touch))
    assert got == pytest.approx(float(exact), rel=1e-9), (got, float(exact))


@pytest.mark.parametrize("z, eps", DESIGNS)
@pytest.mark.parametrize("n, beta", [(1, 0.05), (100, 0.05), (5000, 1e-3)])
def test_the_bernstein_bound_is_taken_at_the_reports_true_range_and_largest_variance(z, eps, n, beta):
    """bernstein_bound__mutmut_6: Bernstein's inequality for a sum of n independent reports needs a bound b on each
    report's deviation from its mean and on its variance; the stated bound must be at least the one taken at the
    exact largest deviation and variance over every true mutation (from the response matrix), union over the z
    cells: a smaller range or variance understates the error."""
    d = _design(z, eps)
    m = d.num_symbols
    dev, var = Fraction(0), Fraction(0)
    for s in range(m):
        v, mean = _exact_cell_variance(d, s, 0)
        gap = Fraction(d.p) - Fraction(d.q)
        dev = max(dev, *(abs(Fraction(_effect(r, z)[0]) / gap - mean) for r in range(m)))
        var = max(var, v)
    log_term = math.log(2 * z / beta)
    a = float(dev) * log_term / 3
    floor = a + math.sqrt(a * a + 2 * n * float(var) * log_term)
    assert bernstein_bound(d, n, beta) >= floor * (1 - 1e-12)


def _config(z):
    return DynamicConfig((QuerySet("answer", "histogram", domain_size=z),), PureDP(8.0))


def _reports(design, end, per_tick, seed):
    """Synthetic reports (any symbol, at each layer's node ends): the collector only adds them up."""
    rng = random.Random(seed)
    z = design.domain_size
    out = []
    for t in range(1, end + 1):
        for layer in design.layers_ending_at(t):
            for i in range(rng.randrange(per_tick + 1)):
                old, new = mutation_of(rng.randrange(design.num_symbols), z)
                out.append((f"e{t}-{layer}-{i}", Report(t, layer, old, new)))
    return out


@pytest.mark.parametrize(
    "opts",
    [RROptions(max_mutations=2), RROptions(max_mutations=3, aggregation="hdcr", layers=3, branching=3)],
    ids=["direct", "hdcr"],
)
def test_every_release_adds_up_exactly_the_reports_of_its_decomposition(opts):
    """_release__mutmut_31/34, in_memory__mutmut_15: at every tick t the histogram estimate stands on the reports of
    the c-ary decomposition of (0, t] (a layer-i node's reports until the layer above covers it; the top layer's for
    ever): the release's report count, estimate and per-cell variances equal node_estimate / variance_estimate of
    exactly those reports, counted here from the reports themselves."""
    z, end = 3, 20
    coll = RandomizedResponseCollector(_config(z), options=opts, end_tick=end)
    d = coll.design
    reports = _reports(d, end, 4, seed=7)
    rels = in_memory(coll, reports, end)
    assert [r.tick for r in rels] == list(range(1, end + 1))
    h, c = d.layers, d.branching
    for rel in rels:
        t = rel.tick
        behind = [
            symbol_of(rep.old, rep.new, z)
            for _, rep in reports
            if rep.period <= t and (rep.layer == h - 1 or rep.period > t // c ** (rep.layer + 1) * c ** (rep.layer + 1))
        ]
        diff, touch, n = node_counts(behind, z)
        assert rel.reports == n
        assert rel.estimate == pytest.approx(node_estimate(diff, d), abs=1e-9)
        assert rel.variance == pytest.approx([variance_estimate(d, n, x) for x in touch], rel=1e-12)
        assert rel.error_bound == pytest.approx(bernstein_bound(d, n, rel.beta), rel=1e-12)
        change = [symbol_of(rep.old, rep.new, z) for _, rep in reports if rep.period == t and rep.layer == 0]
        assert rel.change_reports == len(change)


# --- the noise derivations (test_noise.py pins their values; these assert what the values are for) ---------------

KEY = bytes(range(32))


def test_each_release_of_a_key_draws_its_own_noise_and_a_release_always_the_same():
    """for_release__mutmut_7 (the release id and digest left out of the sub-key): two releases under one key must
    draw independent noise (a second release with the first one's noise would reveal the difference of their
    answers); the same release identity, asked again (a restored or continued release), the same noise."""
    from transforms.core.foundation.noise import NoiseSource, ReleaseIdentity

    src = NoiseSource(KEY)

    def words(identity):
        return src.for_release(identity).stream("s", "count", 1).words(4).tolist()

    a, again = words(ReleaseIdentity("r1", "d")), words(ReleaseIdentity("r1", "d"))
    assert a == again
    assert words(ReleaseIdentity("r2", "d")) != a
    assert words(ReleaseIdentity("r1", "e")) != a


def test_a_digest_mixes_every_part_and_keeps_the_release_id():
    """ReleaseIdentity.with_digest__mutmut_6/9/10: ``with_digest`` keeps the release id and gives a 128-bit digest
    (32 hex digits) that depends on the base digest and on every part: a configuration change under the same id must
    change the digest (the release then refuses it or draws other noise), never leave it or the id as it was."""
    from transforms.core.foundation.noise import ReleaseIdentity

    base = ReleaseIdentity("r1", "abc")
    d = base.with_digest("x", 3)
    assert d.release_id == "r1" and len(d.config_digest) == 32 and int(d.config_digest, 16) >= 0
    assert d.config_digest != base.config_digest
    assert d == base.with_digest("x", 3)
    others = {base.with_digest("y", 3), base.with_digest("x", 4), ReleaseIdentity("r1", "abd").with_digest("x", 3)}
    assert d not in others and len(others) == 3
