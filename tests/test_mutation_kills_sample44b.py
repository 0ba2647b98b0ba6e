"""Tests written for the survivors of the mutation round of session 44, group b (``transforms/core/counters/`` and
``transforms/core/plans.py``; ``benchmarks/mutation_fast.py``, seed 20261127, 70 mutants a module; issue 27). As in
``test_mutation_kills_sample43b.py``: each asserts a property of the module (a release's noise against the budget it
spends, a stated bound, a charge, a refusal the contract states, the cost an algorithm states), never a pinned value,
and names the mutant(s) it kills (checked with ``python -m benchmarks.mutation_fast confirm NAME TEST``: passes
unmutated, fails on the mutant). Fast: in memory, no Beam."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from transforms.core import ZCDP, CountMechanism, HistogramMechanism, NoiseSource, PureDP
from transforms.core.counters import COUNTERS, KaryTreeCounter, make_counter
from transforms.core.counters.factorization import anytime as anytime_mod
from transforms.core.counters.factorization import kary_signed as kary_signed_mod
from transforms.core.counters.factorization import lattice as lattice_mod
from transforms.core.counters.factorization import scaled as scaled_mod
from transforms.core.counters.factorization.anytime import (
    A2,
    B2,
    EPS,
    K0,
    K02,
    N2,
    P2,
    Q2,
    A,
    WideTables,
    anytime_variance_path,
    limb_dot,
)
from transforms.core.counters.factorization.blt import BLT_TABLE, optimize_blt
from transforms.core.counters.factorization.coefficients import (
    LATTICE_BITS,
    blt_max_error,
    blt_sensitivity_squared,
    series_inverse,
    snap_coefficients,
    sqrt_coefficients,
)
from transforms.core.counters.factorization.kary import kary_radices, kary_variance_path
from transforms.core.counters.factorization.kary_signed import (
    KarySignedCounter,
    signed_nodes,
    signed_shape,
)
from transforms.core.counters.factorization.lattice import LatticeTables, toeplitz_variance_path
from transforms.core.counters.factorization.scaled import (
    SCALED_TABLE,
    optimize_scaled,
    scaled_variance_path,
)
from transforms.core.foundation.accounting import Ledger
from transforms.core.foundation.state import encode, to_plain
from transforms.core.static.pmw import PMWMechanism


# kills transforms.core.counters.factorization.coefficients.x__conv__mutmut_12 (open since round 43: the FFT length
# from size + 1 instead of size - 1, i.e. twice the smallest power of two for products of 2^k - 1 or 2^k terms; in
# series_inverse that is the last Newton step of every n = 2^i + 1, e.g. sqrt_factorization's tables at horizons
# 5, 9, 17, ...: the same convolution, twice the FFT work, and other rounding) and x_series_inverse__mutmut_25 (the
# step's c h not truncated mod x^m: its next product multiplies a series of the FFT's length, twice or more the work)
@pytest.mark.parametrize("n", [2, 5, 9, 17, 33, 64, 65, 100])
def test_series_inverse_multiplies_by_ffts_of_the_smallest_power_of_two_that_holds_each_product(n, monkeypatch):
    """``series_inverse`` is a Newton iteration with FFT products (docs/counters.md, "Error"): each product of an
    a-term and a b-term series is the linear convolution of a + b - 1 terms, computed by FFTs of a power-of-two
    length that holds it (>= a + b - 1: no wrap-around of the high terms onto the low ones) and is the smallest such
    (< 2 (a + b - 1): no doubled work), and every factor is truncated mod x^m (the step's h (2 - c h) mod x^m: no
    factor of more than n terms). Checked on every FFT it runs for the lattice square-root table of horizon n
    (n = 2^i + 1 ends with a product of exactly 2^(i+1) terms), and the result is the inverse series: its product
    with the series is 1 + O(x^n) to float accuracy."""
    calls = []
    rfft = np.fft.rfft

    def recording(x, m=None, *args, **kwargs):
        calls.append((len(x), m))
        return rfft(x, m, *args, **kwargs)

    monkeypatch.setattr(np.fft, "rfft", recording)
    c = snap_coefficients(sqrt_coefficients(n)).astype(np.float64) / float(1 << LATTICE_BITS)
    h = series_inverse(c, n)
    monkeypatch.undo()
    assert calls and len(calls) % 2 == 0
    for (la, m1), (lb, m2) in zip(calls[::2], calls[1::2]):
        size = la + lb - 1
        assert m1 == m2 and m1 & (m1 - 1) == 0, (la, lb, m1, m2)
        assert size <= m1 < max(2, 2 * size), f"an FFT of {m1} for a product of {size} terms"
        assert la <= n and lb <= n, f"a product of series of {la} and {lb} terms (not truncated mod x^{n})"
    np.testing.assert_allclose(np.convolve(c, h)[:n], np.eye(n)[0], atol=1e-12)


# kills transforms.core.counters.xǁCounterSpecǁmake__mutmut_13 (a registered counter built without the arguments its
# name fixes: "honaker" runs the plain binary tree and "infinite_honaker" the plain infinite counter)
def test_every_registered_counter_runs_as_the_counter_its_name_registers():
    """A release plans its counter by name (the plan's ``counter``, the manifest): ``make_counter(name)`` runs that
    counter, under that name, with that estimator. The two Honaker variants share their class with the plain trees
    and differ only in the argument their name fixes: after 3 steps at the same budget (two nodes summed), Honaker's
    estimator states a smaller variance than the plain tree's (its point: 8.33 against 10 and 4.67 against 6 at
    rho = 0.5 over 16 periods)."""
    variance = {}
    for name in COUNTERS:
        c = make_counter(name, CountMechanism(noise="gaussian"), ZCDP(0.5), horizon=16)
        for _ in range(3):
            c.step(np.array([1]), NoiseSource.disabled())
        assert c.name == name
        variance[name] = c.variance()
    assert variance["honaker"] < variance["binary_tree"]
    assert variance["infinite_honaker"] < variance["infinite"]


# kills transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_14 (a counter on its own ledger keeps a
# record of every release: its state grows with the stream)
@pytest.mark.parametrize("name", ["naive_increments", "binary_tree"])
def test_a_counter_on_its_own_ledger_counts_its_releases_and_keeps_no_record_of_them(name):
    """Without a scope a counter charges a private ledger of its budget that counts its releases and keeps no record
    of them (``Ledger(keep_records=False)``; records are for tests and audits that pass their own ledger): the
    counter's state does not grow with the number of releases, for naive_increments not at all (the same encoded
    size after 10 and after 200 steps)."""
    sizes = []
    for steps in (10, 200):
        c = make_counter(name, CountMechanism(), PureDP(1.0), horizon=256)
        for _ in range(steps):
            c.step(np.array([1]), NoiseSource.disabled())
        assert c.scope.ledger.num_releases >= steps
        assert c.scope.ledger.records == []
        sizes.append(len(encode(to_plain(c))))
    if name == "naive_increments":
        assert sizes[0] == sizes[1]


# kills transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_18 (the estimate before the first step a
# 0-d zero instead of one zero per query: numpy broadcasting hides it from an elementwise comparison)
@pytest.mark.parametrize("name", sorted(COUNTERS))
def test_every_counter_before_its_first_step_answers_each_query_of_its_mechanism(name):
    """A counter's estimate is one answer per query of its mechanism (``num_queries``), also before its first step
    (the empty prefix: a zero per query), and the same shape after it: a histogram of 3 cells gets 3 answers."""
    mech = HistogramMechanism(3, noise="gaussian") if name == "scaled_sqrt" else HistogramMechanism(3)
    budget = ZCDP(0.5) if name == "scaled_sqrt" else PureDP(1.0)
    c = make_counter(name, mech, budget, horizon=16)
    assert c.estimate.shape == (mech.num_queries,) == (3,)
    np.testing.assert_array_equal(c.estimate, 0.0)
    c.step(np.array([1, 0, 2]), NoiseSource.disabled())
    assert c.estimate.shape == (3,)


# kills transforms.core.counters.factorization.blt.x_optimize_blt__mutmut_70 (the Nelder-Mead stage run with scipy's
# default options instead of the optimiser's: xatol and fatol 1e-4, a cap of 200 x 6 = 1,200 iterations, no adaptive
# parameters; the second start stops at its cap)
def test_the_blt_optimisers_nelder_mead_stage_converges_from_its_first_two_starts():
    """``optimize_blt``'s first stage meets its tolerances (xatol 1e-9, fatol 1e-13) before its cap of 3000 x
    buffers iterations from every start, and says so (``converged``; ``test_factorization.py`` checks the first start
    and the cap's twin): at (64, 3) the second start converges too."""
    converged: list[bool] = []
    optimize_blt(64, 3, restarts=2, converged=converged)
    assert converged == [True, True]


# kills transforms.core.counters.factorization.blt.x_optimize_blt__mutmut_62 (the Nelder-Mead stage's xatol 1.000000001
# instead of 1e-9: it stops as soon as its simplex's values agree to fatol, and Powell, started from there, stops 1e-13
# relative above the minimum at n = 8)
def test_the_blt_optimiser_reaches_the_tables_ratio_within_its_powell_stopping_tolerance():
    """``BLT_TABLE`` is ``optimize_blt``'s output: for n = 8 (2 buffers) the optimiser ends within its last stage's
    stopping tolerance of the table's true ratio (closed forms). Powell stops when an iteration lowers the log loss f
    by less than ftol |f| (ftol 1e-14; f = log(ratio s(n)^2), about 1.1): the ratio is allowed twice that above the
    table's, about 2.2e-14 relative (the minimum is flat; processors differ in the poles' last digits)."""
    theta, theta_hat = (np.array(x) for x in BLT_TABLE[3])
    s = float(np.sum(sqrt_coefficients(8) ** 2))
    table = blt_sensitivity_squared(theta, theta_hat) * blt_max_error(theta, theta_hat, 8) / (s * s)
    tol = 2 * 1e-14 * abs(math.log(table * s * s))
    assert 1e-14 < tol < 1e-13
    assert optimize_blt(8, 2)[2] <= table * (1 + tol)


# kills transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ__init____mutmut_39 (noise drawn in
# blocks of min(256, horizon) steps whatever the query count: 256 m numbers drawn ahead and held in the state) and
# __init____mutmut_40 (blocks not cut to the horizon: a short-lived counter draws 256 steps of noise for 10 steps)
@pytest.mark.parametrize(
    "name,cells,horizon",
    [(n, m, 1000) for n in ("sqrt_factorization", "blt") for m in (1, 100, 5000)]
    + [("sqrt_factorization", 1, 10), ("sqrt_factorization", 100, 10)],
)
def test_a_lattice_counter_draws_its_noise_ahead_in_blocks_of_at_most_4096_numbers(name, cells, horizon):
    """docs/counters.md, "Noise": the lattice counters draw their noise in blocks of B = max(1, min(256, floor(4096 /
    m))) steps (m queries), never more than the horizon (lattice.py: a short-lived counter, a fully-dynamic node's,
    draws only the noise it can use; blt's horizon is a design horizon, it runs unbounded), and the drawn values
    wait in the counter's state: after its first step a counter holds B - 1 steps of noise, never more than 4096
    numbers in all nor more steps than it has left (m = 1: 255 steps; 100: 39; 5000: none; horizon 10: 9)."""
    c = make_counter(name, HistogramMechanism(cells, noise="gaussian"), ZCDP(0.5), horizon=horizon)
    c.step(np.zeros(cells, dtype=np.int64), NoiseSource(b"h44mb-lattice-noise-blocks-00000"))
    block = max(1, min(256, 4096 // cells, horizon if name == "sqrt_factorization" else 256))
    assert c.block == block
    assert c._noise.shape == (block - 1, cells)
    assert c._noise.size + cells <= max(4096, cells)
    assert name == "blt" or len(c._noise) <= horizon - 1


# kills transforms.core.counters.trees.xǁBinaryTreeCounterǁ__init____mutmut_43 (the open nodes summed in float64
# instead of int64: a node's items are rounded as they are added, past 2^53)
def test_a_binary_tree_node_sums_its_items_exactly_past_2_to_the_53():
    """The binary tree keeps "the exact dataset of the current node" per level (trees.py): a node's items are summed
    in integers and the node released once. Noise off, the estimate at t = 4 is one node holding the whole prefix:
    2^52 + 2^52 + 1 + 1 = 2^53 + 2, a float64 (even), so the estimate is exactly it; summed in floats the two 1s
    are each lost against 2^53 (round half to even)."""
    c = make_counter("binary_tree", CountMechanism(), PureDP(1.0), horizon=8)
    items = [2**52, 2**52, 1, 1]
    for b in items:
        est = c.step(np.array([b]), NoiseSource.disabled())
    assert float(sum(items)) == 2.0**53 + 2
    assert est[0] == 2.0**53 + 2


# kills transforms.core.counters.factorization.anytime.xǁWideTablesǁ__init____mutmut_8 (the refusal needs c_0 != 2^20
# AND c_1 >= c_0: a first coefficient other than 2^20, or c_1 = c_0, passes alone)
@pytest.mark.parametrize("cls", [LatticeTables, WideTables])
def test_wide_tables_refuse_the_coefficients_lattice_tables_refuse(cls):
    """``WideTables`` are ``LatticeTables`` whose coefficients may sum past 2^31 or reach 0: the same decoder, so
    the same coefficients are refused (c_0 = 2^20, non-increasing, c_1 < c_0 for a stable decoder,
    Enestrom-Kakeya; docs/counters.md; ``LatticeTables`` also a 0, which ``WideTables`` take since stop 62: the
    floor's zeros past ``c_k h(k) 2^20 < 1``), each violation alone; a valid row is accepted."""
    one = 1 << LATTICE_BITS
    cls(np.array([one, one // 2, one // 4]), 4)
    bads = [
        [one - 1, one // 2, one // 4],  # c_0 is not 2^20 (c_1 < c_0 holds)
        [one + 1, one // 2],  # c_0 is not 2^20 (c_1 < c_0 holds)
        [one, one, one // 2],  # c_1 = c_0
        [one, one // 2, one // 2 + 1],  # increases
        [one, one // 2, -1],  # negative
        [one, one // 2, 0, 1],  # rises after a 0
    ]
    if cls is LatticeTables:
        bads.append([one, one // 2, 0])  # not positive
    else:
        cls(np.array([one, one // 2, 0, 0]), 4)  # the floor's zeros: a column of finite support
    for bad in bads:
        with pytest.raises(AssertionError):
            cls(np.array(bad), 4)


# kills transforms.core.counters.base.xǁContinualCounterǁerror_bound__mutmut_20 (a non-additive black box's bound
# asked without the batch-size bound n: PMW answers inf whatever n)
@pytest.mark.parametrize("name", ["binary_tree", "naive_increments"])
def test_a_non_additive_counters_error_bound_is_the_union_bound_of_its_black_boxes_at_n(name):
    """``error_bound(beta, n)`` of a counter over a non-additive black box (PMW, whose error depends on the size n of
    every released batch) is the union bound over the releases summed into the estimate: sum c |w| alpha(b, beta / k,
    n) with k the number of releases; finite for a finite n and growing with it; without n it cannot be bounded
    (inf)."""
    mech = PMWMechanism(8, ranges=True)
    c = make_counter(name, mech, PureDP(1.0), horizon=8)
    for _ in range(3):
        c.step(np.array([1, 0, 2, 0, 0, 1, 0, 0]), NoiseSource(b"h44mb-pmw-error-bound-key-000000"))
    k = sum(count for _, count, _ in c._terms)
    assert k >= 2
    for n in (100, 10000):
        want = math.fsum(count * abs(w) * mech.alpha(b, 0.05 / k, n=n) for b, count, w in c._terms)
        assert math.isfinite(want)
        assert c.error_bound(0.05, n=n) == want
    assert c.error_bound(0.05, n=100) < c.error_bound(0.05, n=10000)
    assert c.error_bound(0.05) == math.inf


# kills transforms.core.counters.factorization.anytime.x__damping_block__mutmut_42 (profile 2's damping past N2 = 2^24
# with 1 - B2 ln(k / N2) for 1 + B2 ln(k / N2): h grows past N2, diverges at e N2 and turns negative: the summable tail
# that anytime_tail_bound (the stated sensitivity's tail) integrates is gone)
def test_the_anytime_damping_is_the_documented_non_increasing_profile_past_its_knee():
    """Profile 2 (new counters; anytime.py, docs/counters.md): h(k)^2 = (1 + A2 ln(1 + k / K02))^-P2 for k < N2, then
    h(N2)^2 (1 + B2 ln(k / N2))^-Q2, a summable tail that ``anytime_tail_bound`` integrates for the sensitivity. The
    damping the coefficients are built from is that function (to a few ulps) on aligned blocks before, across and
    well past the knee N2 = 2^24 (up to 2^27 steps), positive, at most 1 and non-increasing."""
    blocks = [0, 1, 4095, 4096, 4097, 8192, 11136, 11137, 20000, 32767]
    prev = 1.0
    for i in blocks:
        k = np.arange(i * 4096, (i + 1) * 4096, dtype=np.float64)
        h = anytime_mod._damping_block(i, 2)
        below = (1.0 + A2 * np.log1p(np.minimum(k, N2) / K02)) ** (-P2)
        want2 = below * (1.0 + B2 * np.log(np.maximum(k, N2) / N2)) ** (-Q2)
        np.testing.assert_allclose(h * h, want2, rtol=1e-12)
        assert np.all(h > 0) and np.all(h <= 1.0)
        assert np.all(np.diff(h) <= 0) and h[0] <= prev
        prev = h[-1]


# kills transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁ_node_noise__mutmut_66 (every logged
# node release at cost 0: the release log, which the privacy harness and the event log read, no longer carries the
# budget the counter charged)
def test_kary_signed_release_log_carries_the_budget_it_charges_once():
    """``kary_signed`` charges its whole budget once (one release R x + z, post-processed at every step) and its release
    log says so: the first logged node release carries the budget, every later one 0, so the log's costs compose to
    exactly the ledger's charge."""
    budget = PureDP(0.7)
    ledger = Ledger(budget)
    c = KarySignedCounter(CountMechanism(), budget, horizon=30, scope=ledger.root)
    c.release_log = []
    for _ in range(20):
        c.step(np.array([1]), NoiseSource(b"h44mb-kary-signed-log-cost-00000"))
    costs = [x[1] for x in c.release_log]
    assert len(costs) > 3
    assert [r.cost for r in ledger.records] == [budget]
    assert costs[0] == budget
    assert all(x == budget.scale(0.0) for x in costs[1:])


# kills transforms.core.counters.factorization.blt.x_blt_log_loss__mutmut_66 (v >= 0 for v > 0: a loss of exactly 0,
# which the closed forms' cancellation could return, reaches math.log(0) and raises inside the optimiser)
@pytest.mark.parametrize("v", [0.0, -0.0, -1.0, float("nan"), float("inf"), 2.0])
def test_the_blt_objective_is_1e30_wherever_its_product_is_not_a_positive_finite_number(v, monkeypatch):
    """``blt_log_loss`` (the offline optimiser's objective) returns log(sens^2 x max error) where that product is a
    positive finite number and 1e30 everywhere else, never an exception that would stop the optimiser's search: the
    closed forms are replaced by ones that return each edge value (0, -0, negative, nan, inf) at a valid point (the
    first table entry's poles)."""
    from transforms.core.counters.factorization import blt as fz

    monkeypatch.setattr(fz, "blt_sensitivity_squared", lambda theta, theta_hat: 1.0)
    monkeypatch.setattr(fz, "blt_max_error", lambda theta, theta_hat, n: v)
    theta, theta_hat = (np.array(x) for x in BLT_TABLE[3])
    p = np.concatenate([np.log(-np.log(theta)), np.log(-np.log(theta_hat))])
    want = math.log(v) if math.isfinite(v) and v > 0 else 1e30
    assert fz.blt_log_loss(p, 8) == want


# kills transforms.core.counters.factorization.lattice.x__dot__mutmut_21 (only the first chunk of a long product
# summed: the encoder and the decoder of a window past 8192 rows drop its older rows)
@pytest.mark.parametrize("length,m", [(100, 1), (8192, 1), (8193, 1), (20000, 1), (5000, 3)])
def test_the_chunked_lattice_product_is_the_whole_exact_product(length, m):
    """``lattice._dot(c, w)`` is ``c @ w`` in fixed row chunks (about 8192 numbers each, below OpenBLAS's
    multi-threading size): every row is in exactly one chunk, and integer inputs keep integer partial sums, so the
    result is the exact product (Python integers) at every length, also past one chunk; each row of w here is
    distinct, so a dropped or repeated chunk changes the sum."""
    rng = np.random.default_rng(length + m)
    c = rng.integers(0, 1 << 20, size=length).astype(np.float64)
    w = rng.integers(-(1 << 12), 1 << 12, size=(length, m)).astype(np.float64)
    want = [sum(int(a) * int(b) for a, b in zip(c, w[:, j])) for j in range(m)]
    assert max(abs(v) for v in want) < 2**53
    got = lattice_mod._dot(c, w)
    assert got.shape == (m,)
    assert [int(v) for v in got] == want


# kills transforms.core.counters.factorization.scaled.xǁScaledTablesǁ__init____mutmut_42 (the decoder's row norms
# computed without the horizon: the whole convolution, 2T - 1 rows, of which only the first T are rows of the matrix)
def test_the_scaled_variance_path_has_one_variance_per_step_and_they_are_the_counters():
    """``scaled_variance_path(T, rho)`` is the analytic per-step variance of ``scaled_sqrt``, t = 1..T: T values, the
    counter's own stated ``variance()`` at each step (a count, zCDP rho, noise off: the statement does not depend on
    the draws), and their max is the counter's max over the horizon."""
    horizon, rho = 16, 0.5
    path = scaled_variance_path(horizon, rho)
    assert path.shape == (horizon,)
    c = make_counter("scaled_sqrt", CountMechanism(noise="gaussian"), ZCDP(rho), horizon=horizon)
    stated = []
    for _ in range(horizon):
        c.step(np.array([1]), NoiseSource.disabled())
        stated.append(c.variance())
    np.testing.assert_allclose(path, stated, rtol=1e-12)


# kills transforms.core.counters.factorization.scaled.x_optimize_scaled__mutmut_52 (the continuation's minimiser
# chosen by scipy (BFGS) instead of L-BFGS-B: its ftol and maxcor are unknown to BFGS and ignored, with a warning)
def test_optimize_scaled_runs_the_minimiser_whose_options_it_states():
    """``optimize_scaled`` runs L-BFGS on ``scaled_objective`` with the options it states (maxiter, ftol, gtol,
    maxcor): every one is an option of the solver it runs (scipy warns, OptimizeWarning, of an option a solver does
    not know and ignores it), and from the square root it ends below s(n)^2 / 2 (T = 2^4, milliseconds)."""
    from scipy.optimize import OptimizeWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", OptimizeWarning)
        coef, v = optimize_scaled(4)
    s = float(np.sum(sqrt_coefficients(16) ** 2))
    assert len(coef) == 16 and v < s * s / 2


# kills transforms.core.counters.trees.xǁBinaryTreeCounterǁstep__mutmut_38 (Honaker's node releases at coordinate
# "NODE" instead of "node": the same charges, but the plan of the infinite counter, which reads "node" in a
# release's coordinates, takes a tree node for a range release and refuses the counter's own charges)
@pytest.mark.parametrize("name", ["infinite", "infinite_honaker", "binary_tree", "honaker"])
def test_every_charge_of_a_tree_counter_is_its_planned_cost_at_its_own_coordinates(name):
    """The contract: every charge of a counter is its registry entry's ``planned_cost`` at the charge's own
    coordinates (docs/counters.md): for the infinite counters budget / 2 per finished range and budget / 2 / (i + 1)
    per node of range i's tree, told apart by the coordinates; Honaker's nodes sit at the same coordinates as the
    plain tree's (its estimator only post-processes them)."""
    budget = PureDP(1.0)
    ledger = Ledger(budget)
    c = make_counter(name, CountMechanism(), budget, horizon=16, coords=("s",), scope=ledger.root)
    for t in range(15):
        c.step(np.array([t % 3]), NoiseSource.disabled())
    assert ledger.records
    for r in ledger.records:
        assert r.cost == COUNTERS[name].planned_cost(budget, r.coordinates, horizon=16), r.coordinates
    nodes = {r.coordinates for r in ledger.records if "node" in r.coordinates}
    assert nodes and len(nodes) == len([r for r in ledger.records if "node" in r.coordinates])


# kills transforms.core.counters.factorization.blt.x_optimize_blt__mutmut_98 (Powell's ftol misspelt: scipy ignores
# it with a warning and stops at its default 1e-4) and every misspelt or unknown option of its two stages
def test_optimize_blt_runs_its_two_stages_with_options_they_know():
    """``optimize_blt``'s Nelder-Mead and Powell stages run with the tolerances it states (xatol 1e-9, fatol 1e-13,
    adaptive; xtol 1e-10, ftol 1e-14): every option is one its solver knows (scipy warns, OptimizeWarning, of an
    option a solver does not know and ignores it). n = 8, 2 buffers, one start (milliseconds)."""
    from scipy.optimize import OptimizeWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", OptimizeWarning)
        converged: list[bool] = []
        theta, theta_hat, ratio = optimize_blt(8, 2, restarts=1, converged=converged)
    assert converged == [True] and len(theta) == len(theta_hat) == 2 and ratio < 1.05


# kills transforms.core.counters.factorization.coefficients.x_sqrt_coefficients__mutmut_22 (setflags(write=None), which
# leaves the cached array writable: a caller writing into it changes every later counter's coefficients)
def test_the_cached_square_root_coefficients_are_read_only():
    """``sqrt_coefficients`` is cached (``lru_cache``): the array it returns is shared by every later caller, so it is
    read-only; a write is refused and the next call returns the same coefficients."""
    c = sqrt_coefficients(8)
    assert not c.flags.writeable
    with pytest.raises(ValueError):
        c[1] = 1.0
    assert sqrt_coefficients(8)[1] == 0.5


# kills transforms.core.counters.factorization.anytime.x_limb_dot__mutmut_4 (limbs of width 2 refused too: the exact
# product refused for coefficients summing to [2^58, 2^59), below the limit its message states)
@pytest.mark.parametrize("top", [57, 58])
def test_limb_dot_is_exact_up_to_its_stated_limit_and_refuses_past_it(top):
    """``limb_dot`` multiplies exactly while the coefficients sum below 2^59 (limbs of width w = 61 - bit_length(s1)
    >= 2 keep every int64 partial sum below s1 2^w < 2^61) and refuses from 2^59 ("the lattice coefficients sum to
    2^59 or more"): at s1 = 2^57 and 2^58 the Python-integer product of a window near 2^61, at 2^59 a ValueError."""
    c = np.array([1 << (top - 1), 1 << (top - 1)], dtype=np.int64)
    s1 = int(c.sum())
    win = np.array([[(1 << 61) - 3, -5], [7, -(1 << 60) + 11]], dtype=np.int64)
    want = [sum(int(a) * int(b) for a, b in zip(c, win[:, j])) for j in range(2)]
    assert limb_dot(c, win, s1) == want
    with pytest.raises(ValueError):
        limb_dot(c, win, 1 << 59)


# kills transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁ__init____mutmut_30 (each noise kind
# searched with the other's variance model: a Laplace counter takes the Gaussian's shape and vice versa)
@pytest.mark.parametrize("kind,budget", [("laplace", PureDP(1.0)), ("gaussian", ZCDP(0.5))], ids=["pure", "zcdp"])
def test_kary_signed_takes_the_shape_of_least_mean_variance_for_its_noise(kind, budget):
    """``kary_signed`` without a shape takes the (k, h) of least mean variance over t = 1..T for its noise (a node's
    variance grows as h^2 under Laplace, h under zCDP: ``signed_shape``'s exponent): over T = 100 its stated
    variances average below those of the other noise's shape ((13, 2) for Laplace, (5, 3) for zCDP) at the same
    budget."""
    horizon = 100
    own = signed_shape(horizon, 2 if kind == "laplace" else 1)
    other = signed_shape(horizon, 1 if kind == "laplace" else 2)
    assert own != other

    def mean_variance(shape):
        c = KarySignedCounter(CountMechanism(noise=kind), budget, horizon=horizon, shape=shape)
        out = []
        for _ in range(horizon):
            c.step(np.array([1]), NoiseSource.disabled())
            out.append(c.variance())
        return (c.k, c.h), sum(out) / horizon

    chosen, v = mean_variance(None)
    assert chosen == own
    assert v < mean_variance(other)[1]


# kills transforms.core.counters.factorization.scaled.x_max_column_norm_sq__mutmut_74 (the exactness guard lets a limb
# convolution off by up to 1.25 through: np.rint then returns the wrong integer, and the column norm, scaled_sqrt's
# sensitivity, is wrong)
@pytest.mark.parametrize("off", [0.2, 0.4, 0.6])
def test_max_column_norm_sq_refuses_a_limb_convolution_it_cannot_round_exactly(off, monkeypatch):
    """``max_column_norm_sq`` (the exact L2 sensitivity of ``scaled_sqrt``) rounds each FFT limb convolution to the
    integers and checks that every value was within 1/4 of one (its docstring bounds the FFT error below 2^-5 in its
    range): an FFT made off by ``off`` in every value still gives the exact norm when off < 1/4 and is refused
    (AssertionError) when every value is more than 1/4 from an integer (0.4, 0.6), never answered with a wrong
    integer."""
    from transforms.core.counters.factorization import scaled as sc

    s = np.array([3, 1000, 7, 2], dtype=np.int64)
    c = np.array([1 << 20, 700000, 3], dtype=np.int64)
    want = max(sum(int(s[j + m]) ** 2 * int(c[m]) ** 2 for m in range(min(len(s) - j, len(c)))) for j in range(len(s)))
    conv = sc._conv
    monkeypatch.setattr(sc, "_conv", lambda a, b: conv(a, b) + off)
    if abs(off - round(off)) < 0.25:
        assert sc.max_column_norm_sq(s, c) == want
    else:
        with pytest.raises(AssertionError, match="within 1/4"):
            sc.max_column_norm_sq(s, c)


# kills transforms.core.counters.factorization.blt.x__load_table__mutmut_15 (the table's entries in the file's string
# order: 10, 11, .., 20, 3, .., 9)
def test_the_blt_table_lists_its_design_horizons_in_ascending_order():
    """``BLT_TABLE`` (public: log2 of the design horizon -> the poles) is loaded from ``blt_table.json`` in numeric
    order of its design horizons, 2^3 .. 2^20 ascending, whatever the order of the file's string keys ("10" sorts
    before "3"): the module's table and a fresh load of the file."""
    from transforms.core.counters.factorization import blt as fz

    for table in (BLT_TABLE, fz._load_table()):
        keys = list(table)
        assert keys == sorted(keys) and keys[0] == 3 and keys[-1] == 20
        assert all(isinstance(k, int) for k in keys)


# kills transforms.core.counters.factorization.coefficients.x_snap_coefficients__mutmut_15 (the cut after the last
# non-zero taken also when there is none: an all-zero snap raises IndexError instead of returning one zero)
@pytest.mark.parametrize(
    "c,want",
    [([0.5, 0.25, 0.0, 0.0], [1 << 19, 1 << 18]), ([0.0, 0.0], [0]), ([2.0**-22, -(2.0**-23)], [0]), ([2.0**-20], [1])],
)
def test_snap_coefficients_rounds_to_the_lattice_and_cuts_after_the_last_non_zero(c, want):
    """``snap_coefficients(c)`` = round(c_k 2^20) as int64 (half to even), cut after the last non-zero; a series that
    rounds to zero everywhere keeps one coefficient (0): the result is never empty."""
    got = snap_coefficients(np.array(c))
    assert got.dtype == np.int64
    assert got.tolist() == want


# kills transforms.core.counters.factorization.kary.xǁKaryTreeCounterǁ__init____mutmut_66 (the open nodes summed in
# float64 instead of int64: a node's items are rounded as they are added, past 2^53)
def test_a_kary_tree_releases_each_node_as_the_exact_sum_of_its_items():
    """The k-ary tree keeps each level's open node as the exact integers of its items (kary.py) and releases it
    once: noise off, every logged node release is its items' exact sum, rounded once to float64. Items 2^52, 2^52,
    then 1s: a node of 4 holds 2^53 + 2 (a float64), which summing in floats item by item rounds to 2^53."""
    c = KaryTreeCounter(CountMechanism(noise="gaussian"), ZCDP(0.5), horizon=27, radices=(2, 2, 2))
    c.release_log = []
    items = [2**52, 2**52] + [1] * 14
    for b in items:
        c.step(np.array([b]), NoiseSource.disabled())
    assert list(c.sizes) == [1, 2, 4, 8]
    for coords, _, values in c.release_log:
        j, i = coords[-2], coords[-1]
        size = c.sizes[j]
        assert values[0] == float(sum(items[(i - 1) * size : i * size])), coords
    assert any(values[0] == 2.0**53 + 2 for _, _, values in c.release_log)


# kills transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁ_prune__mutmut_13 (the pruning keeps a
# node below the top only if it ends k^(j+1) steps AFTER t: the middle level's nodes still in use are forgotten and
# drawn again, logged twice)
@pytest.mark.parametrize("shape", [(3, 3), (5, 3)])
def test_kary_signed_draws_and_logs_each_node_once_across_its_prunings(shape):
    """Every output of ``kary_signed`` is a post-processing of ONE release R x + z (module docstring): each node's
    noise is drawn once, at its first use, and logged once; the pruning at every 64th step forgets only nodes no
    later prefix uses. With three levels (the 43b test has two), a middle-level node spans several prunings' worth of
    prefixes: over 200 steps the logged coordinates are unique, exactly the nodes some prefix used, and the last
    estimate is the signed sum of the logged releases of its prefix."""
    k, h = shape
    c = KarySignedCounter(CountMechanism(), PureDP(1.0), horizon=200, shape=shape)
    c.release_log = []
    noise = NoiseSource(b"h44mb-kary-signed-prune-three-lv")
    used = set()
    rng = np.random.default_rng(11)
    for t in range(1, 201):
        est = c.step(np.array([int(rng.integers(0, 3))]), noise)
        used |= {(j, i) for j, i, _ in signed_nodes(t, k, h)}
    coords = [tuple(x[0]) for x in c.release_log]
    assert len(coords) == len(set(coords)), "a node's release is logged more than once"
    assert {(x[-2], x[-1]) for x in coords} == used
    logged = {(x[0][-2], x[0][-1]): np.asarray(x[2], dtype=np.float64) for x in c.release_log}
    np.testing.assert_array_equal(sum(s * logged[(j, i)] for j, i, s in signed_nodes(200, k, h)), est)


# kills transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_9 (the path's table chosen one
# doubling too large: at 256 steps it reads the 512-step table, whose decoder weights differ from the 256-step
# table's the counter runs in their last bits) and __mutmut_10 (one doubling too small at 257 steps: a path of 256)
@pytest.mark.parametrize("steps", [200, 256, 257])
def test_the_anytime_variance_path_is_the_counters_own_stated_variance(steps):
    """``anytime_variance_path(steps, rho)`` is the analytic per-step variance of ``anytime_sqrt``: it reads the
    smallest table (``anytime_tables``, first 256 steps, then doublings) that holds its steps, the table the counter
    itself runs on up to there, so within the first table it is the counter's stated ``variance()`` at each step to
    the last bit (noise off: the statement does not depend on the draws)."""
    path = anytime_variance_path(steps, 0.5)
    c = make_counter("anytime_sqrt", CountMechanism(noise="gaussian"), ZCDP(0.5))
    stated = []
    for _ in range(steps):
        c.step(np.array([1]), NoiseSource.disabled())
        stated.append(c.variance())
    assert path.shape == (steps,)
    if steps <= 256:
        np.testing.assert_array_equal(path, stated)
    else:  # past the first table the path reads the 512-step table throughout: its last bits may differ
        np.testing.assert_allclose(path, stated, rtol=1e-12)


# kills transforms.core.counters.factorization.anytime.x__damping_block__mutmut_20 (profile 1's damping with
# log1p(k K0) for log1p(k / K0): a restored profile-1 counter's coefficients damped from the first step)
def test_the_anytime_profile_1_damping_is_its_documented_function():
    """Profile 1 (a restored counter without ``profile`` in its state; anytime.py): h(k)^2 = (1 + A ln(1 + k /
    K0))^-(1 + EPS), K0 = 250,000: 1 at k = 0, above 0.98 over the first block (k < 4096), the damping only past
    K0; the blocks the coefficients are built from are that function (to a few ulps), positive, at most 1 and
    non-increasing."""
    prev = 1.0
    for i in [0, 1, 60, 61, 1000, 5000]:
        k = np.arange(i * 4096, (i + 1) * 4096, dtype=np.float64)
        h = anytime_mod._damping_block(i, 1)
        np.testing.assert_allclose(h * h, (1.0 + A * np.log1p(k / K0)) ** (-(1.0 + EPS)), rtol=1e-12)
        assert np.all(h > 0) and np.all(h <= 1.0)
        assert np.all(np.diff(h) <= 0) and h[0] <= prev
        prev = h[-1]
    assert anytime_mod._damping_block(0, 1)[0] == 1.0 and anytime_mod._damping_block(0, 1)[4095] > 0.98


# kills transforms.core.counters.factorization.kary.x_kary_radices__mutmut_28 (radix 2 left out of the search: the
# k-ary tree of least mean variance is missed where the binary tree beats every radix >= 3, e.g. T = 4..8 under zCDP)
@pytest.mark.parametrize("exponent", [1, 2])
def test_kary_radices_are_no_worse_than_any_binary_tree(exponent):
    """``kary_radices(T, exponent)`` searches radix sequences of values k and k + 1 for every number of levels, the
    binary trees (every radix 2, k = 2) among them: its choice's mean per-step variance over t = 1..T (Honaker's
    estimate, node variance levels^exponent: ``kary_variance_path``) is no worse than that of any binary tree of 2..
    bit_length(T) levels that fits T."""
    for horizon in [4, 5, 6, 7, 8, 12, 16, 33, 64, 100]:
        radices = kary_radices(horizon, exponent)
        mean = kary_variance_path(horizon, radices, float((len(radices) + 1) ** exponent)).mean()
        for levels in range(2, horizon.bit_length() + 1):
            binary = (2,) * (levels - 1)
            other = kary_variance_path(horizon, binary, float(levels**exponent)).mean()
            assert mean <= other * (1 + 1e-12), (horizon, radices, binary)


# kills transforms.core.counters.factorization.kary_signed.x__mean_cost__mutmut_61 (the digit sums of the levels below
# the top at sizes 1, k, k, .. instead of 1, k, k^2, ..: wrong from 4 levels on, so signed_shape compares wrong means)
@pytest.mark.parametrize("horizon,k,h", [(100, 3, 2), (100, 3, 3), (300, 3, 4), (400, 5, 4), (250, 3, 5)])
def test_kary_signed_mean_cost_is_the_mean_number_of_nodes_per_prefix(horizon, k, h):
    """``_mean_cost(T, k, h)`` (what ``signed_shape`` minimises) is, exactly, the mean over t = 1..T of the number of
    nodes in the prefix's signed-digit decomposition (``signed_nodes``) times h^2 (pure DP: a node's variance grows as
    h^2): brute force over every prefix, to float rounding."""
    nodes = sum(len(signed_nodes(t, k, h)) for t in range(1, horizon + 1))
    assert kary_signed_mod._mean_cost(horizon, k, h) == pytest.approx(nodes / horizon * h * h, rel=1e-12)


# kills transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_advance_weights__mutmut_44 (past its
# precomputed table the BLT's recurrence window receives None instead of the new weight: the stated variance turns NaN)
def test_a_blt_counters_stated_variance_past_its_table_is_the_analytic_path():
    """docs/counters.md ("Error"): an unbounded BLT continues its decoder weights past the precomputed table by the
    recurrence b_k = 1 - sum_{j>=1} c~_j b_{k-j}; its stated variance stays the analytic sigma^2 g^2 sum_{k<t} b_k^2
    (``toeplitz_variance_path``, a fresh series inverse to t), to float rounding, at every step: design horizon 8,
    a table of 32 steps, 100 steps."""
    c = make_counter("blt", CountMechanism(noise="gaussian"), ZCDP(1.0), horizon=8)
    stated = []
    for _ in range(100):
        c.step(np.array([1]), NoiseSource.disabled())
        stated.append(c.variance())
    assert len(c._tab.b) == 32
    np.testing.assert_allclose(stated, toeplitz_variance_path("blt", 8, 100, 1.0), rtol=1e-12)


# kills transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_advance_weights__mutmut_62 (each
# decoder weight counted twice in the Laplace profile: the stated error bound of a pure-DP lattice counter doubles)
@pytest.mark.parametrize("name", ["sqrt_factorization", "blt"])
def test_a_laplace_lattice_counters_profile_rounds_each_weight_up_once(name):
    """docs/counters.md ("Error"): under Laplace noise the decoder weights are rounded up to the grid 2^(j/16) and
    counted, one term per weight, while ``variance()`` stays exact: the profile's variance is at least the exact one
    and at most 2^(2/16) times it (each |w| at most 2^(1/16) high), at every step."""
    c = make_counter(name, CountMechanism(), PureDP(1.0), horizon=32)
    for _ in range(20):
        c.step(np.array([1]), NoiseSource.disabled())
        exact, stated = c.variance(), c.noise_profile().variance()
        assert exact <= stated * (1 + 1e-12)
        assert stated <= exact * 2.0 ** (2 / 16) * (1 + 1e-12)


# kills transforms.core.counters.factorization.scaled.x__coefficients__mutmut_25 (no interpolation between table rows:
# every horizon takes the row of floor(log2 T))
def test_scaled_coefficients_are_interpolated_linearly_in_log2_horizon_between_table_rows():
    """docs/counters.md: between table entries the scaled square root's coefficients are interpolated linearly in
    log2 T (clamped to the table): at T = 2^a they are row a; at T between 2^a and 2^(a+1) they are the mix of rows
    a and a + 1 with weight log2 T - a."""
    for horizon in (100, 724, 3000):
        x = math.log2(horizon)
        a = math.floor(x)
        ca, cb = np.array(SCALED_TABLE[a]), np.array(SCALED_TABLE[a + 1])
        np.testing.assert_allclose(scaled_mod._coefficients(horizon), ca + (x - a) * (cb - ca), rtol=1e-12, atol=1e-15)
        assert not np.allclose(scaled_mod._coefficients(horizon), ca)
    np.testing.assert_array_equal(scaled_mod._coefficients(1024), np.array(SCALED_TABLE[10]))


# kills transforms.core.counters.factorization.scaled.x__load_table__mutmut_12 (the table's rows in the file's string
# order: 1, 10, 11, .., 19, 2, 20, 3, ..)
def test_the_scaled_table_lists_its_horizons_in_ascending_order():
    """``SCALED_TABLE`` (public: log2 T -> the 16 cosine coefficients) is loaded from ``scaled_table.json`` in numeric
    order, 2^1 .. 2^20 ascending, whatever the order of the file's string keys: the module's table and a fresh load
    of the file."""
    from transforms.core.counters.factorization import scaled as sc

    for table in (SCALED_TABLE, sc._load_table()):
        keys = list(table)
        assert keys == sorted(keys) and keys[0] == 1 and keys[-1] == 20
        assert all(isinstance(k, int) and len(table[k]) == 16 for k in keys)


# kills transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁstep__mutmut_61 (t / 64 == 0 for
# t % 64 == 0: the pruning never runs, and the counter keeps the noise of every node it ever drew)
def test_kary_signed_keeps_only_the_noise_a_later_prefix_can_use():
    """``kary_signed`` prunes at every 64th step (``_prune``: below the top level, a node ending more than k^(j+1)
    steps ago is forgotten, no later prefix uses it): right after a pruning, at t = 256, the stored noise is only
    that of top-level nodes and of lower nodes ending within k^(j+1) steps of t, far fewer than it drew."""
    k, h = 3, 2
    c = KarySignedCounter(CountMechanism(), PureDP(1.0), horizon=300, shape=(k, h))
    drawn = set()
    for t in range(1, 257):
        c.step(np.array([1]), NoiseSource(b"h44mb-kary-signed-prune-memory-0"))
        drawn |= {(j, i) for j, i, _ in signed_nodes(t, k, h)}
    kept = {tuple(int(v) for v in key.split(":")) for key in c._z}
    assert all(j == h - 1 or i * k**j >= 256 - k ** (j + 1) for j, i in kept)
    assert len(kept) < len(drawn) - 100


def _radix_family(horizon: int, levels: int) -> set:
    """``kary_radices``' documented candidate family for ``levels`` levels (values k and k + 1, both orders)."""
    if levels == 1:
        return {()}
    k_lo = max(2, int(horizon ** (1.0 / levels)) - 1)
    k_hi = max(k_lo, int(horizon ** (1.0 / (levels - 1)) + 1e-9) + 1)
    out = set()
    for k in range(k_lo, min(k_hi, 4 * k_lo + 4) + 1):
        for n_up in range(levels):
            seq = [k + 1] * n_up + [k] * (levels - 1 - n_up)
            if math.prod(seq) <= horizon:
                out.update({tuple(seq), tuple(reversed(seq))})
    return out


@pytest.mark.parametrize("exponent", [1, 2])
def test_kary_radices_breaks_ties_toward_the_first_in_its_search_order(exponent):
    """Kills ``kary.kary_radices__mutmut_109`` (a candidate replacing the best at a mean below best (1 + 1e-12):
    on an exact tie the LAST candidate wins). The documented rule, against a brute force over the same family
    with exact means: the result has the least mean up to a relative 1e-12, and no candidate earlier in the
    search order (fewer levels, then the smaller tuple) is within that tolerance of the minimum; so the tree a
    configuration gets does not hinge on float rounding. T = 14 (exponent 1) and T = 611 (exponent 2) tie
    exactly ((2, 2) / (2, 3) at 71.0; (8, 8) / (8, 9))."""
    from transforms.core.counters.factorization import kary as kary_module

    ties = 0
    for horizon in [*range(1, 260), 611, 1000]:
        order, means = [], {}
        for levels in range(1, max(2, horizon.bit_length()) + 1):
            for rad in sorted(_radix_family(horizon, levels)):
                v = kary_module._kary_level_variances(rad, float(levels**exponent))
                sizes = [math.prod(rad[:j]) for j in range(levels)]
                means[rad] = sum(
                    v[j] * kary_module.digit_total(horizon, sizes[j], rad[j] if j < levels - 1 else None)
                    for j in range(levels)
                )
                order.append(rad)
        low = min(means.values())
        tied = [r for r in order if means[r] <= low * (1 + 1e-12)]
        ties += len(tied) > 1
        assert kary_module.kary_radices(horizon, exponent) == tied[0], (horizon, tied)
    assert ties >= 1  # the rule is exercised: at least one exact tie in the range
