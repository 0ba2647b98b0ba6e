"""Calibration: the noise actually drawn is the noise the charged budget implies,
and empirical privacy tests on neighbouring inputs.

Every expected law is written out here from the papers, not taken from the
library: discrete Laplace with scale b = Delta_1 / eps has variance
2q / (1 - q)^2, q = exp(-1/b) and P(Z >= k) = q^k / (1 + q) (k >= 1); the
discrete Gaussian with sigma^2 = Delta_2^2 / (2 rho) has pmf proportional to
exp(-z^2 / (2 sigma^2)) (rho from ``rho_for_approx`` for an (eps, delta)
budget); a real-valued query matrix is rounded to the lattice 2^-20 and its
sensitivities are those of the rounded integer matrix. The sparse vector
(000, Alg. 1) draws threshold noise at scale 2/eps and query noise at 4/eps.

Statistics (false-failure rates are per test):

* variance checks: ``z = (s2 - var) / SE``, ``s2`` the mean of squared noises
  (known mean 0), SE from the empirical fourth moment; |z| < 5.0, a two-sided
  normal tail of 5.7e-7 (n >= 4000 draws, so the normal approximation of a
  mean of squares is accurate there);
* frequency checks: exact two-sided binomial tests at 1e-6 / (number of tests);
* privacy-loss checks: for events E, the log-ratio of the empirical
  probabilities on neighbouring inputs, with its delta-method SE, must lie
  within z_crit SE of the loss the charged calibration implies (two-sided: too
  much noise fails too), and its lower confidence bound must not exceed the
  guarantee (one-sided). Bonferroni over events; <= 1e-6 per test.

Each check also runs on a broken twin (noise at half the variance, or the
sparse vector at half its scales) and must fail there.
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from scipy import stats

from transforms.core import (
    ZCDP,
    ApproxDP,
    CountMechanism,
    HistogramMechanism,
    InfinitePartitioner,
    LinearQueryMechanism,
    NoiseSource,
    PartitionParams,
    PureDP,
    make_counter,
)

Z_VAR = 5.0
LATTICE = 2.0**-20


# ---------------------------------------------------------------------------
# Reference laws (written from the definitions)
# ---------------------------------------------------------------------------


def dlap_variance(b: float) -> float:
    q = math.exp(-1 / b)
    return 2 * q / (-math.expm1(-1 / b)) ** 2


def dlap_pmf(z: np.ndarray, b: float) -> np.ndarray:
    q = math.exp(-1 / b)
    return (1 - q) / (1 + q) * q ** np.abs(z)


def dlap_at_least(k: int, b: float) -> float:
    """P(Z >= k) for Z ~ DLap(b)."""
    q = math.exp(-1 / b)
    return q**k / (1 + q) if k >= 1 else 1 - q ** (1 - k) / (1 + q)


def dgauss_support(sigma2: float):
    lim = int(math.ceil(40 * math.sqrt(sigma2))) + 10
    z = np.arange(-lim, lim + 1)
    w = np.exp(-(z.astype(float) ** 2) / (2 * sigma2))
    return z, w / w.sum()


def dgauss_variance(sigma2: float) -> float:
    if sigma2 > 400:  # sigma > 20: equal to sigma2 within exp(-2 pi^2 sigma2)
        return sigma2
    z, p = dgauss_support(sigma2)
    return float(np.sum(p * z.astype(float) ** 2))


def implied_variance(mech_kind: str, matrix: np.ndarray, budget) -> float:
    """Variance of one answer (answer units) that ``budget`` implies for the
    query matrix (rows = queries) with Laplace or Gaussian noise."""
    real = not np.all(matrix == np.rint(matrix))
    unit = LATTICE if real else 1.0
    units = np.rint(matrix / unit)
    if mech_kind == "laplace":
        delta1 = np.max(np.abs(units).sum(axis=0))
        return dlap_variance(delta1 / budget.epsilon) * unit**2
    delta2_sq = np.max((units**2).sum(axis=0))
    rho = budget.gaussian_rho()
    return dgauss_variance(delta2_sq / (2 * rho)) * unit**2


def variance_z(x: np.ndarray, var: float) -> float:
    x2 = np.asarray(x, dtype=float) ** 2
    s2 = x2.mean()
    se = math.sqrt(max(np.mean(x2**2) - s2**2, 1e-300) / len(x2))
    return (s2 - var) / se


# ---------------------------------------------------------------------------
# Static mechanisms
# ---------------------------------------------------------------------------

_rng = np.random.default_rng(2024)
BINARY = (_rng.random((400, 6)) < 0.5).astype(float)
REAL = _rng.random((400, 4))

MECHS = {
    # name: (constructor(kind), query matrix, releases, hist)
    "count": (lambda k: CountMechanism(3, k), np.ones((1, 3)), 4000),
    "histogram": (lambda k: HistogramMechanism(2000, k), np.eye(2000), 2),
    "linear01": (lambda k: LinearQueryMechanism(BINARY, k), BINARY, 10),
    "linear_real": (lambda k: LinearQueryMechanism(REAL, k), REAL, 10),
}
BUDGETS = {
    "laplace-pure": ("laplace", PureDP(0.7)),
    "laplace-approx": ("laplace", ApproxDP(0.7, 1e-6)),
    "gaussian-zcdp": ("gaussian", ZCDP(0.3)),
    "gaussian-approx": ("gaussian", ApproxDP(0.7, 1e-6)),
}


def _twin_budget(budget):
    """A budget whose noise has half the variance of ``budget``'s."""
    if isinstance(budget, ZCDP):
        return ZCDP(2 * budget.rho)
    if isinstance(budget, PureDP):
        return PureDP(budget.epsilon * math.sqrt(2))
    return ApproxDP(budget.epsilon * math.sqrt(2), budget.delta)


def drawn_noise(mech, budget, releases: int, tag: str) -> np.ndarray:
    """Noise of ``releases`` public releases (answers minus exact answers)."""
    rng = np.random.default_rng(zlib.crc32(tag.encode()))
    out = []
    for r in range(releases):
        h = rng.integers(0, 5, mech.domain_size)
        rel = mech.release(h, budget, NoiseSource(bytes(16) + r.to_bytes(16, "big")).stream("calibration", tag))
        out.append(mech.answer(rel) - mech.exact(h))
    return np.concatenate(out)


@pytest.mark.statistical
@pytest.mark.parametrize("budget_name", sorted(BUDGETS))
@pytest.mark.parametrize("mech_name", sorted(MECHS))
def test_static_noise_variance_is_the_charged_one(mech_name, budget_name):
    """Empirical variance of the released noise (>= 4000 draws, several seeded
    releases) equals the variance implied by the budget charged (|z| < 5,
    false failure 5.7e-7); a twin drawing half that variance fails."""
    make, matrix, releases = MECHS[mech_name]
    kind, budget = BUDGETS[budget_name]
    mech = make(kind)
    var = implied_variance(kind, matrix, budget)
    noise = drawn_noise(mech, budget, releases, f"{mech_name}/{budget_name}")
    assert len(noise) >= 4000
    z = variance_z(noise, var)
    assert abs(z) < Z_VAR, (z, np.mean(noise**2), var)
    twin = drawn_noise(mech, _twin_budget(budget), max(releases // 4, 1), f"{mech_name}/{budget_name}")
    assert abs(variance_z(twin, var)) >= Z_VAR


# ---------------------------------------------------------------------------
# Sparse vector technique (000, Alg. 1) inside the partitioning (Alg. 2)
# ---------------------------------------------------------------------------

SVT_EPS, SVT_BETA = 2.0, 0.5


def theta_1(eps: float, beta: float) -> float:
    """theta_1 = (7/eps) ln(2 T_1 / beta_1), T_1 = 2, beta_1 = 6 beta / pi^2."""
    return (7 / eps) * math.log(2 * 2 / (6 * beta / math.pi**2))


def svt_first_segment(runs: int, tag: str, counts_for):
    """For each run (own key): the threshold noise z0 of segment 1, read as the
    partitioner's attribute ``theta_hat_floor`` (= floor(theta_1) + z0; the only
    partitioner state these tests read), the k with which the first query halts
    iff Z >= k, and whether segment 1 closed at tick 1 after
    ``counts_for(r, theta_hat_floor)`` updates there."""
    params = PartitionParams(SVT_EPS, SVT_BETA)
    base = math.floor(theta_1(SVT_EPS, SVT_BETA))
    z0s, ks, closed = np.empty(runs, dtype=np.int64), np.empty(runs, dtype=np.int64), np.empty(runs, dtype=bool)
    for r in range(runs):
        noise = NoiseSource(tag.encode().ljust(24, b".") + r.to_bytes(8, "big"))
        part = InfinitePartitioner(params, coords=("svt-calibration",))
        part.advance(0, noise)  # starts segment 1: threshold drawn
        theta_hat = part.theta_hat_floor
        c = counts_for(r, theta_hat)
        z0s[r], ks[r] = theta_hat - base, theta_hat - c + 1
        closed[r] = part.observe(1, c, noise) == [1]
    return z0s, ks, closed


def _cycle_k(r, theta_hat):
    """c updates at tick 1 with c = theta_hat + 1 - k: halts at tick 1 iff Z >= k."""
    return max(theta_hat + 1 - (1 + r % 6), 1)


def svt_problems(z0s, ks, closed) -> list[str]:
    problems = []
    z = variance_z(z0s, dlap_variance(2 / SVT_EPS))
    if abs(z) >= Z_VAR:
        problems.append(f"threshold noise variance z = {z:.1f}")
    tests = range(1, 7)
    for k in tests:
        sel = ks == k
        n, x = int(sel.sum()), int(closed[sel].sum())
        p = dlap_at_least(k, 4 / SVT_EPS)
        if stats.binomtest(x, n, p).pvalue < 1e-6 / len(tests):
            problems.append(f"P(Z >= {k}): {x}/{n} halts, expected {p:.3f}")
    return problems


@pytest.mark.statistical
def test_sparse_vector_noise_scales():
    """Threshold noise: variance of 6000 draws of z0 against DLap(2/eps)
    (|z| < 5). Query noise: with c updates at tick 1 chosen so that the first
    query halts iff Z >= k (k = 1..6, 1000 runs each), the halting frequency
    against P(Z >= k) for DLap(4/eps) (exact binomial tests, 1e-6 overall)."""
    problems = svt_problems(*svt_first_segment(6000, "svt", _cycle_k))
    assert not problems, problems


@pytest.mark.statistical
@pytest.mark.parametrize("which", ["threshold_scale", "query_scale"])
def test_sparse_vector_check_catches_half_scales(which, monkeypatch):
    """Twins: threshold noise at 1/eps (variance / 4) or query noise at 2/eps
    (P(Z >= k) about halved): the matching check fails (2400 runs; a miss has
    probability < 1e-9 at these effect sizes)."""
    half = 1 if which == "threshold_scale" else 2
    monkeypatch.setattr(PartitionParams, which, property(lambda self: half / self.epsilon))
    problems = svt_problems(*svt_first_segment(2400, "svt", _cycle_k))
    assert any(("threshold" in p) == (which == "threshold_scale") for p in problems), problems


# ---------------------------------------------------------------------------
# Empirical privacy on neighbouring inputs (two-sided)
# ---------------------------------------------------------------------------


def loss_problems(hits_a, n_a, hits_b, n_b, expected, guarantee) -> list[str]:
    """Events e: ``hits_a[e]`` of ``n_a`` runs on D, ``hits_b[e]`` of ``n_b`` on
    the neighbour D'. ``expected[e]`` = ln P_D'(e) / P_D(e) under the charged
    calibration; ``guarantee[e]`` the largest loss the privacy claim allows."""
    problems = []
    m = len(expected)
    z_crit = stats.norm.isf(1e-6 / (2 * m))
    for e in range(m):
        pa, pb = hits_a[e] / n_a, hits_b[e] / n_b
        if min(hits_a[e], hits_b[e]) < 100:
            problems.append(f"event {e}: too few hits ({hits_a[e]}, {hits_b[e]}) to estimate a loss")
            continue
        loss = math.log(pb / pa)
        se = math.sqrt((1 - pa) / hits_a[e] + (1 - pb) / hits_b[e])
        if abs(loss - expected[e]) > z_crit * se:
            problems.append(f"event {e}: loss {loss:.3f} +- {se:.3f}, calibration implies {expected[e]:.3f}")
        if loss - z_crit * se > guarantee[e]:
            problems.append(f"event {e}: loss {loss:.3f} +- {se:.3f} exceeds the guarantee {guarantee[e]:.3f}")
    return problems


# -- Gaussian mechanism ------------------------------------------------------

GAUSS_RHO = 0.125  # sigma^2 = 4
GAUSS_CELLS = 200_000
GAUSS_TAUS = (1, 3, 5)


def gaussian_outputs(rho: float, value: int, tag: str) -> np.ndarray:
    """Outputs of the Gaussian count on a dataset of ``value`` items, as the
    cells of one histogram release (every cell is one count of L2 sensitivity 1)."""
    mech = HistogramMechanism(GAUSS_CELLS, "gaussian")
    hist = np.full(GAUSS_CELLS, value)
    return mech.answer(mech.release(hist, ZCDP(rho), NoiseSource(bytes(32)).stream("privacy", tag)))


def gaussian_loss_problems(rho_drawn: float) -> list[str]:
    """D: count 0, D': count 1; events {output >= tau}. Expected loss from the
    discrete Gaussian with sigma^2 = 1/(2 rho) (rho charged = GAUSS_RHO).
    Guarantee: rho-zCDP implies (eps, delta)-DP with eps = rho + 2
    sqrt(rho ln(1/delta)), delta = 1e-6, i.e. P_D'(E) <= e^eps P_D(E) + delta:
    a loss of at most ln(e^eps + delta / P_D(E))."""
    a = gaussian_outputs(rho_drawn, 0, f"gauss/{rho_drawn}/D")
    b = gaussian_outputs(rho_drawn, 1, f"gauss/{rho_drawn}/D'")
    z, p = dgauss_support(1 / (2 * GAUSS_RHO))
    tail = lambda t: float(p[z >= t].sum())  # noqa: E731
    delta = 1e-6
    eps = GAUSS_RHO + 2 * math.sqrt(GAUSS_RHO * math.log(1 / delta))
    expected = [math.log(tail(t - 1) / tail(t)) for t in GAUSS_TAUS]
    guarantee = [math.log(math.exp(eps) + delta / tail(t)) for t in GAUSS_TAUS]
    hits_a = [int(np.sum(a >= t)) for t in GAUSS_TAUS]
    hits_b = [int(np.sum(b >= t)) for t in GAUSS_TAUS]
    return loss_problems(hits_a, len(a), hits_b, len(b), expected, guarantee)


@pytest.mark.statistical
def test_gaussian_mechanism_privacy_loss():
    """200,000 runs per side; events {output >= 1, 3, 5}: losses 0.40, 0.78, 1.21
    measured within z_crit SE of the calibration's (false failure <= 1e-6)."""
    problems = gaussian_loss_problems(GAUSS_RHO)
    assert not problems, problems


@pytest.mark.statistical
def test_gaussian_privacy_check_catches_half_variance():
    """Twin: the noise drawn for 2 rho while rho is charged (half the variance):
    the losses (0.58, 1.39, 2.2) leave the calibration's interval by > 10 SE."""
    assert gaussian_loss_problems(2 * GAUSS_RHO)


# -- sparse-vector partitioning ------------------------------------------------

SVT_COUNT_OFFSETS = (-1, 0)
SVT_LOSS_RUNS = 2500


def svt_first_close_loss_problems(runs: int) -> list[str]:
    """Neighbouring count streams: c updates at tick 1 (D) or c + 1 (D'),
    c = floor(theta_1) + o for o in SVT_COUNT_OFFSETS (public: c does not depend
    on the noise). Output: the first close tick (1 or the deadline 2). Event:
    {first close = 1}. Expected loss from Alg. 1's laws: P(close at 1 | c) =
    sum_z0 P(z0) P(Z >= floor(theta_1) + z0 - c + 1), z0 ~ DLap(2/eps),
    Z ~ DLap(4/eps). Guarantee: eps (the partitioning is eps-DP)."""
    base = math.floor(theta_1(SVT_EPS, SVT_BETA))
    z0 = np.arange(-80, 81)
    pz0 = dlap_pmf(z0, 2 / SVT_EPS)

    def p_close(c):
        return float(np.sum(pz0 * np.array([dlap_at_least(base + int(z) - c + 1, 4 / SVT_EPS) for z in z0])))

    expected, hits_a, hits_b = [], [], []
    for o in SVT_COUNT_OFFSETS:
        c = base + o
        expected.append(math.log(p_close(c + 1) / p_close(c)))
        _, _, closed_a = svt_first_segment(runs, f"first/{o}/D", lambda r, th, c=c: c)
        _, _, closed_b = svt_first_segment(runs, f"first/{o}/D'", lambda r, th, c=c: c + 1)
        hits_a.append(int(closed_a.sum()))
        hits_b.append(int(closed_b.sum()))
    m = len(expected)
    return loss_problems(hits_a, runs, hits_b, runs, expected, [SVT_EPS] * m)


@pytest.mark.statistical
def test_sparse_vector_partitioning_privacy_loss():
    """eps = 2, 2 x 2 x 2500 runs: the loss of {first close at tick 1} at two
    count levels (0.42 and 0.33; at most eps/4 = 0.5 for this event) within
    z_crit SE of Alg. 1's, and below eps (false failure <= 1e-6). The twin's
    losses are 0.94 and 0.6."""
    problems = svt_first_close_loss_problems(SVT_LOSS_RUNS)
    assert not problems, problems


@pytest.mark.statistical
def test_sparse_vector_privacy_check_catches_half_scales(monkeypatch):
    """Twin: threshold and query noise at half their scales (losses 0.94, 0.6
    instead of 0.42, 0.33): caught."""
    monkeypatch.setattr(PartitionParams, "threshold_scale", property(lambda self: 1 / self.epsilon))
    monkeypatch.setattr(PartitionParams, "query_scale", property(lambda self: 2 / self.epsilon))
    assert svt_first_close_loss_problems(SVT_LOSS_RUNS)


# -- binary-tree counter -----------------------------------------------------

TREE_T = 8  # levels 1, 2, 4, 8: an item at timestamp 1 is in all four p-sums [1, 2^k]
TREE_EPS = 1.0
TREE_CELLS = 40_000
TREE_TAUS = (8, 14, 20)


def tree_statistic(eps_drawn: float, item: int, tag: str) -> np.ndarray:
    """S = sum of the estimates at t = 1, 2, 4, 8 of a binary-tree counter, per
    cell of a histogram counter (each cell is an independent count counter:
    one item changes one cell). ``item`` = 1 puts one item in every cell at t = 1."""
    c = make_counter("binary_tree", HistogramMechanism(TREE_CELLS), PureDP(eps_drawn), horizon=TREE_T)
    noise = NoiseSource(tag.encode().ljust(32, b"."))
    s = np.zeros(TREE_CELLS)
    for t in range(1, TREE_T + 1):
        est = c.step(np.full(TREE_CELLS, item if t == 1 else 0), noise)
        if t & (t - 1) == 0:
            s += est
    return s


def tree_loss_problems(eps_drawn: float) -> list[str]:
    """D: no item; D': one item at t = 1. At t = 2^k the binary mechanism's
    estimate is the p-sum of [1, 2^k], released with DLap(L/eps), L = 4 levels:
    S = 4 * item + sum of 4 i.i.d. DLap(4/eps). Events {S >= tau}; guarantee eps."""
    levels = TREE_T.bit_length()
    z = np.arange(-400, 401)
    pmf = dlap_pmf(z, levels / TREE_EPS)
    law = pmf
    for _ in range(levels - 1):
        law = np.convolve(law, pmf)
    support = np.arange(len(law)) - 400 * levels
    tail = lambda t: float(law[support >= t].sum())  # noqa: E731
    expected = [math.log(tail(t - levels) / tail(t)) for t in TREE_TAUS]
    a = tree_statistic(eps_drawn, 0, f"tree/{eps_drawn}/D")
    b = tree_statistic(eps_drawn, 1, f"tree/{eps_drawn}/D'")
    hits_a = [int(np.sum(a >= t)) for t in TREE_TAUS]
    hits_b = [int(np.sum(b >= t)) for t in TREE_TAUS]
    return loss_problems(hits_a, len(a), hits_b, len(b), expected, [TREE_EPS] * len(TREE_TAUS))


@pytest.mark.statistical
def test_binary_tree_counter_privacy_loss():
    """40,000 runs (cells) per side; events {S >= 8, 14, 20}: losses 0.44, 0.55,
    0.62 (tending to eps = 1 in the tail) within z_crit SE of the calibration's
    and below eps (false failure <= 1e-6)."""
    problems = tree_loss_problems(TREE_EPS)
    assert not problems, problems


@pytest.mark.statistical
def test_binary_tree_privacy_check_catches_half_variance():
    """Twin: the counter's noise drawn for eps sqrt(2) (half the variance) while
    eps is charged: losses 0.68, 0.82, 0.94, > 5 SE off."""
    assert tree_loss_problems(TREE_EPS * math.sqrt(2))
