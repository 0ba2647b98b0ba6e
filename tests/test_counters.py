"""Continual counters against brute-force prefix sums; accounting; error bounds."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from transforms.core.accounting import ZCDP, BudgetExceededError, Ledger, PureDP
from transforms.core.counters import COUNTER_NAMES, make_counter
from transforms.core.noise import NoiseSource
from transforms.core.static import CountMechanism, HistogramMechanism, LinearQueryMechanism

DOMAIN = 4
batches = st.lists(
    st.one_of(st.none(), st.lists(st.integers(0, 5), min_size=DOMAIN, max_size=DOMAIN)),
    min_size=1,
    max_size=70,
)


@settings(max_examples=40, deadline=None)
@given(stream=batches, name=st.sampled_from(COUNTER_NAMES), kind=st.sampled_from(["laplace", "gaussian"]))
def test_noise_off_equals_prefix_sum(stream, name, kind):
    """With noise switched off every counter is exact after every timestamp
    (including empty and multi-item timestamps)."""
    mech = HistogramMechanism(DOMAIN, kind)
    budget = PureDP(1.0) if kind == "laplace" else ZCDP(0.5)
    c = make_counter(name, mech, budget, horizon=len(stream))
    off = NoiseSource.disabled()
    prefix = np.zeros(DOMAIN)
    for b in stream:
        if b is not None:
            prefix += b
        np.testing.assert_allclose(c.step(None if b is None else np.array(b), off), prefix)


@pytest.mark.parametrize("name", COUNTER_NAMES)
def test_linear_queries_counter_noise_off(name, no_noise, rng):
    mech = LinearQueryMechanism([[1, 0, 1], [0.5, 0.5, 0.25]])
    c = make_counter(name, mech, PureDP(1.0), horizon=40)
    h = np.zeros(3)
    for _ in range(40):
        b = rng.integers(0, 4, 3)
        h += b
        np.testing.assert_allclose(c.step(b, no_noise), mech.exact(h))


@pytest.mark.parametrize("name", COUNTER_NAMES)
@pytest.mark.parametrize("budget", [PureDP(0.7), ZCDP(0.3)])
def test_spend_within_budget_and_per_level(name, budget, noise):
    kind = "laplace" if isinstance(budget, PureDP) else "gaussian"
    ledger = Ledger(budget)
    T = 100
    c = make_counter(name, CountMechanism(kind), budget, horizon=T, scope=ledger.root)
    for t in range(T):
        c.step(np.array([t % 3]), noise)
    spent = ledger.spent
    total = spent.epsilon if isinstance(budget, PureDP) else spent.rho
    cap = budget.epsilon if isinstance(budget, PureDP) else budget.rho
    assert total <= cap * (1 + 1e-12)
    if name in ("binary_tree", "honaker"):
        # one node per level holds each timestamp: L = floor(log2 T) + 1 levels
        assert c.levels == 7
        assert total == pytest.approx(cap)
    if name == "naive_increments":
        assert total == pytest.approx(cap)  # parallel composition over batches


def test_counter_with_exhausted_ledger_refuses_before_noise():
    class Spy(NoiseSource):
        calls = 0

        def stream(self, *coords):
            Spy.calls += 1
            return super().stream(*coords)

    ledger = Ledger(PureDP(1.0))
    ledger.charge(PureDP(0.95))
    c = make_counter("naive_increments", CountMechanism(), PureDP(0.1), scope=ledger.root)
    with pytest.raises(BudgetExceededError):
        c.step(np.array([1]), Spy(bytes(32)))
    assert Spy.calls == 0


@pytest.mark.parametrize("name", ["naive_prefix", "binary_tree", "honaker"])
def test_horizon_is_enforced(name, no_noise):
    c = make_counter(name, CountMechanism(), PureDP(1.0), horizon=3)
    for _ in range(3):
        c.step(None, no_noise)
    with pytest.raises(BudgetExceededError, match="horizon"):
        c.step(None, no_noise)


def test_make_counter_validates():
    with pytest.raises(ValueError, match="unknown counter"):
        make_counter("fenwick", CountMechanism(), PureDP(1.0))
    with pytest.raises(ValueError, match="needs a horizon"):
        make_counter("binary_tree", CountMechanism(), PureDP(1.0))
    with pytest.raises(ValueError, match="Laplace"):
        make_counter("infinite", CountMechanism(), ZCDP(1.0))


def test_replay_identical_and_coordinates_matter(noise, rng):
    stream = [rng.integers(0, 3, DOMAIN) for _ in range(30)]
    outs = []
    for coords in [("s", "a"), ("s", "a"), ("s", "b")]:
        c = make_counter("infinite", HistogramMechanism(DOMAIN), PureDP(1.0), coords=coords)
        outs.append(np.array([c.step(b, noise) for b in stream]))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert not np.array_equal(outs[0], outs[2])


def test_honaker_reduces_variance(noise):
    T = 256
    std = make_counter("binary_tree", CountMechanism(), PureDP(1.0), horizon=T)
    hon = make_counter("honaker", CountMechanism(), PureDP(1.0), horizon=T)
    vs, vh = [], []
    for _ in range(T):
        std.step(None, noise)
        hon.step(None, noise)
        vs.append(std.variance())
        vh.append(hon.variance())
    assert vh[0] == pytest.approx(vs[0])  # a leaf has no descendants
    assert np.mean(vh) < 0.8 * np.mean(vs)
    assert max(vh) < max(vs)


@pytest.mark.statistical
@pytest.mark.parametrize("name", COUNTER_NAMES)
@pytest.mark.parametrize("mech_kind", [("count", "laplace"), ("hist", "laplace"), ("count", "gaussian")])
def test_error_bound_exceedance_rate(name, mech_kind, noise):
    """P(max error > gamma(t, beta)) <= beta at every t.

    300 independent runs; at each t a one-sided binomial test with level
    1e-4 / T (Bonferroni over the T timestamps): a valid bound fails this test
    with probability < 1e-4."""
    what, kind = mech_kind
    mech = CountMechanism(kind) if what == "count" else HistogramMechanism(3, kind)
    budget = PureDP(1.0) if kind == "laplace" else ZCDP(0.5)
    T, runs, beta = 24, 300, 0.2
    exceed = np.zeros(T, dtype=int)
    data = [np.full(mech.domain_size, t % 2) for t in range(T)]
    truth = np.cumsum([d.sum() if what == "count" else d for d in data], axis=0)
    for r in range(runs):
        c = make_counter(name, mech, budget, horizon=T, coords=("run", r))
        for t in range(T):
            est = c.step(data[t], noise)
            exact = truth[t] if what == "hist" else np.array([truth[t]])
            exceed[t] += np.max(np.abs(est - exact)) > c.error_bound(beta)
    for t in range(T):
        p = stats.binomtest(int(exceed[t]), runs, beta, alternative="greater").pvalue
        assert p > 1e-4 / T, (t, exceed[t])


@pytest.mark.statistical
def test_error_bound_test_detects_a_too_small_bound(noise):
    """Negative control: half the naive_prefix bound is exceeded far more than beta."""
    T, runs, beta = 8, 300, 0.2
    exceed = 0
    for r in range(runs):
        c = make_counter("naive_prefix", CountMechanism(), PureDP(1.0), horizon=T, coords=("neg", r))
        for _ in range(T):
            est = c.step(np.array([1]), noise)
        exceed += abs(est[0] - T) > c.error_bound(beta) / 2
    assert stats.binomtest(exceed, runs, beta, alternative="greater").pvalue < 1e-4
