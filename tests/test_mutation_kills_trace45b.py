"""Property tests for the crash-killed mutants of group b (``transforms/core/counters/`` and
``transforms/core/plans.py``) that the differential trace (``benchmarks/mutation_trace.py``, issue 27) showed
returning a wrong value without raising on some input (or, for ``_calibrate__mutmut_4``, that a probe of every counter
x budget kind found releasing almost without noise). Six are killed by an assertion only here (``ASSERTED_BY`` in
``benchmarks/mutation_trace_45b.py``); for five others, tests written before the trace showed them silent, the plain
run later found existing assertions too (``asserted-existing`` there): these tests assert the property directly.

Each test asserts a property of the module (the counter the plan names, the budget a release spends, a stated bound
against the noise it covers, prefix sums with noise off), never a pinned value, and names the mutants it kills in its
docstring; each kill is confirmed with ``python -m benchmarks.mutation_fast confirm --sync NAME TEST`` (passes
unmutated, fails by an assertion on the mutant: the mutant is the broken twin). The judgements of every non-``raises``
mutant of the group: ``benchmarks/mutation_trace_45b.py``. Fast: in memory, no Beam."""

from __future__ import annotations

import numpy as np
import pytest

from transforms.core import ZCDP, ApproxDP, CountMechanism, NoiseSource, PureDP
from transforms.core.counters import COUNTERS, make_counter


@pytest.mark.parametrize("horizon", [16, 100])
@pytest.mark.parametrize("name", sorted(COUNTERS))
def test_the_factory_builds_the_counter_for_the_horizon_it_is_given(name, horizon):
    """A release plans its counter by name and horizon (``PlanEntry.counter`` / ``horizon``, the manifest) and
    ``make_counter`` builds it: a finite counter for exactly that horizon, ``blt`` (and ``anytime_sqrt`` under pure
    DP, which is ``blt`` there) for the design horizon the horizon gives (rounded up to a power of two, at least 8:
    ``BLTCounter``'s docstring), not the default 2^12 whose variance at short horizons is not the planned one; and
    the counter the factory builds states the same variance after the same steps as its class built directly.

    Kills ``counters.x_make_counter__mutmut_6`` / ``__mutmut_11`` and ``counters.xǁCounterSpecǁmake__mutmut_5`` /
    ``__mutmut_10`` (the horizon dropped or passed as None: ``blt`` ran at the default design horizon)."""
    spec = COUNTERS[name]
    for kind, budget in (("laplace", PureDP(1.0)), ("gaussian", ZCDP(0.5))):
        if name == "scaled_sqrt" and kind == "laplace":
            continue
        mech = CountMechanism(noise=kind)
        built = make_counter(name, mech, budget, horizon=horizon, coords=("c",))
        direct = spec.cls(mech, budget, horizon=horizon, coords=("c",), **spec.fixed)
        if spec.needs_horizon:
            assert built.horizon == horizon
        if hasattr(direct, "design_horizon"):
            want = max(8, 1 << (horizon - 1).bit_length())
            assert built.design_horizon == direct.design_horizon == want
        for _ in range(3):
            built.step(np.array([1]), NoiseSource.disabled())
            direct.step(np.array([1]), NoiseSource.disabled())
        assert built.variance() == direct.variance()


@pytest.mark.parametrize("kind,budget", [("gaussian", ZCDP(0.5)), ("laplace", PureDP(1.0))], ids=["zcdp", "pure"])
def test_infinite_honaker_states_the_plain_trees_noise_where_both_sum_the_same_nodes_and_never_more(kind, budget):
    """Chan-Shi-Song with Honaker's estimate inside each range's tree (``InfiniteCounter``): at t = 2^i (the first
    step of range i) the estimate is the i closed ranges plus the one leaf of the new tree, exactly the nodes the
    plain ``infinite`` counter sums, so the stated noise (variance, and the (1 - beta) bound computed from it) is
    the same; at every other t Honaker's inverse-variance estimate of the tree's prefix is at most the plain sum's
    variance, and at least the closed ranges' own (the tree's part is never free). A profile that leaves the
    current tree out states a bound the noise exceeds.

    Kills ``counters.trees.xǁInfiniteCounterǁnoise_profile__mutmut_5`` (the check inverted: after the first step
    the noise profile is the closed ranges' alone, 0 at t = 1)."""
    mech = CountMechanism(noise=kind)
    plain = make_counter("infinite", mech, budget)
    hon = make_counter("infinite_honaker", mech, budget)
    half = mech.noise_profile(budget.scale(0.5)).variance()
    for t in range(1, 40):
        plain.step(np.array([1]), NoiseSource.disabled())
        hon.step(np.array([1]), NoiseSource.disabled())
        closed = (t.bit_length() - 1) * half  # ranges [2^i, 2^(i+1)) finished before t
        if t & (t - 1) == 0:
            assert hon.variance() == pytest.approx(plain.variance(), rel=1e-12)
            assert hon.error_bound(0.05) == pytest.approx(plain.error_bound(0.05), rel=1e-9)
        assert closed < hon.variance() <= plain.variance() * (1 + 1e-12)


@pytest.mark.parametrize("name", ["infinite", "infinite_honaker"])
def test_the_infinite_counter_releases_each_step_in_the_range_and_tree_of_its_time_and_never_reuses_a_coordinate(
    name,
):
    """Chan-Shi-Song (``InfiniteCounter``): step t lies in the range [2^i, 2^(i+1)) with i = floor(log2 t); every node
    of that range's tree is released at ``("range", i, "node", ...)`` and the range itself, once finished (at
    t = 2^(i+1) - 1), at ``("range", i)``. Coordinates seed the noise (``noise.stream(*coords)``): a coordinate
    released twice reuses its noise on other data, and the range's budget (half, parallel over disjoint ranges)
    would be spent twice on the same range index. Checked over 70 steps with the release log: each step's
    releases carry its own range index, the range releases come exactly at the range ends, and no coordinate repeats.

    Kills ``counters.trees.xǁInfiniteCounterǁstep__mutmut_57`` (after a range closes the index is set to 1 instead
    of incremented: from t = 4 a second tree of range 1, horizon 2, releases at range 1's coordinates again, with
    the same noise, and the counter only refuses at t = 6)."""
    c = make_counter(name, CountMechanism(noise="gaussian"), ZCDP(0.5), coords=("c",))
    c.release_log = []
    for t in range(1, 71):
        before = len(c.release_log)
        c.step(np.array([1]), NoiseSource.disabled())
        i = t.bit_length() - 1
        for coords, _cost, _values in c.release_log[before:]:
            assert coords[coords.index("range") + 1] == i, (t, coords)
            if "node" not in coords:
                assert t == (1 << (i + 1)) - 1, (t, coords)
    coords = [tuple(r[0]) for r in c.release_log]
    assert len(coords) == len(set(coords)), "a release coordinate (its noise stream) is used twice"
    assert sum("node" not in x for x in coords) == 6  # ranges 0..5 ended by t = 63


@pytest.mark.parametrize(
    "name,horizon,cells", [("sqrt_factorization", 10, 1), ("sqrt_factorization", 40, 3), ("blt", 16, 2)]
)
def test_each_lattice_step_adds_its_own_draw_of_its_blocks_noise_stream(name, horizon, cells):
    """The lattice counters (``lattice.py``, docs/counters.md "Noise") draw the noise of steps jB + 1 .. (j + 1)B at
    once from ``noise.stream(*coords, name, "noise", j)`` (B the block, B x m numbers of the calibrated discrete
    Gaussian) and add row (t - 1) mod B of it at step t: every step gets its own fresh draw of the calibrated law,
    none is skipped or used twice, and a release is reproducible from its key and coordinates alone (a restored or
    recomputed run adds the same noise). On an all-zero stream the release is the noise itself: each step's logged
    release, in lattice units, is exactly that row of an independent draw of the block.

    Kills ``counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_draw__mutmut_39`` (row 1 taken instead of row
    0: every step adds the next step's noise, the first row of each block is never used, and the block's last step
    raises IndexError)."""
    from fractions import Fraction

    from transforms.core import HistogramMechanism
    from transforms.core.counters.factorization.coefficients import LATTICE_BITS
    from transforms.core.foundation.noise import discrete_gaussian

    noise = NoiseSource(b"h45tb-lattice-noise-rows-0000000")
    c = make_counter(name, HistogramMechanism(cells, noise="gaussian"), ZCDP(0.5), horizon=horizon, coords=("c",))
    c.release_log = []
    steps = horizon if name == "sqrt_factorization" else 2 * c.block + 3
    zeros = np.zeros(cells, dtype=np.int64)
    g = c.unit / float(1 << LATTICE_BITS)
    blocks = {}
    for t in range(1, steps + 1):
        c.step(zeros, noise)
        coords, _cost, values = c.release_log[-1]
        assert coords == ("c", name, "step", t)
        j, row = divmod(t - 1, c.block)
        if j not in blocks:
            stream = noise.stream("c", name, "noise", j)
            blocks[j] = discrete_gaussian(stream, Fraction(c.noise_param), c.block * cells).reshape(c.block, cells)
        np.testing.assert_array_equal(np.asarray(values) / g, blocks[j][row])
    assert len(c.release_log) == steps


@pytest.mark.parametrize("n", [1, 2, 3, 4, 16, 100, 1024])
def test_the_square_root_factor_squares_to_the_prefix_sum_and_its_lattice_snap_keeps_every_coefficient(n):
    """``sqrt_factorization`` rests on S = C C (docs/counters.md): the coefficients c_k of C = S^(1/2) convolved
    with themselves are the all-ones first column of the prefix-sum matrix S (to the float rounding of n products),
    and the lattice matrix K snaps every one of them, K_k = round(c_k 2^20), cut only after the last non-zero (c_k
    ~ 1 / sqrt(pi k) is far above 2^-21 here: all n are kept). A factor that is not S's square root, or a snap that
    drops coefficients, is another mechanism than the one whose variance the docs state (still decoded
    consistently, so noise-off prefixes stay exact).

    Kills ``counters.factorization.coefficients.x_sqrt_coefficients__mutmut_17`` (c_k = c_{k-1} (2/k - 1)/(2k):
    0 from k = 2, C = 1 + x/2) and ``x_snap_coefficients__mutmut_16`` (cut two terms early)."""
    from transforms.core.counters.factorization.coefficients import (
        LATTICE_BITS,
        snap_coefficients,
        sqrt_coefficients,
    )
    from transforms.core.counters.factorization.lattice import sqrt_tables

    c = sqrt_coefficients(n)
    assert len(c) == n and c[0] == 1.0
    np.testing.assert_allclose(np.convolve(c, c)[:n], np.ones(n), rtol=1e-12 * n, atol=0)
    want = np.rint(c * float(1 << LATTICE_BITS)).astype(np.int64)
    assert np.all(want > 0)
    np.testing.assert_array_equal(snap_coefficients(c), want)
    np.testing.assert_array_equal(sqrt_tables(n).cint, want)


@pytest.mark.parametrize("profile", [1, 2])
def test_the_anytime_tail_bound_is_at_least_the_tail_it_bounds(profile):
    """``anytime_sqrt``'s sensitivity (the squared norm of its infinite encoder column, ``anytime_sensitivity_sq``)
    is the exact head plus ``anytime_tail_bound(EXACT_TERMS)``: the noise is calibrated to it, so the bound must be
    an upper bound on sum_{k >= n} c_k^2 h(k)^2, whatever n it is asked for. A partial sum of that tail (k from n to
    3 2^20, the same float model: c_k from ``sqrt_coefficients``, h from the counter's damping) is a lower bound on it:
    the stated bound must be at least that, at the counter's n = EXACT_TERMS and at smaller n.

    Kills ``counters.factorization.anytime.x_anytime_tail_bound__mutmut_83`` (profile 2's middle piece with the
    exponent 1 + P2 instead of 1 - P2: a tail bound below the tail, negative at n = 2^21)."""
    from transforms.core.counters.factorization import anytime as any_mod
    from transforms.core.counters.factorization.coefficients import sqrt_coefficients

    top = 3 << 20
    h = np.concatenate([any_mod._damping_block(i, profile) for i in range(top // any_mod._BLOCK)])
    terms = (sqrt_coefficients(top) * h) ** 2
    tails = np.cumsum(terms[::-1])[::-1]  # tails[n] = sum_{n <= k < 3 2^20}
    for n in (2, 100, 4096, 1 << 20, any_mod.EXACT_TERMS):
        assert any_mod.anytime_tail_bound(n, profile) >= tails[n] * (1 - 1e-9), n


@pytest.mark.parametrize("name", ["sqrt_factorization", "blt", "anytime_sqrt", "scaled_sqrt"])
@pytest.mark.parametrize(
    "budget", [ApproxDP(1.0, 1e-6), ApproxDP(0.3, 1e-9), ZCDP(0.5)], ids=["approx1", "approx03", "zcdp"]
)
def test_a_lattice_counters_gaussian_noise_spends_exactly_the_configured_budget(name, budget):
    """The lattice counters release ONE discrete Gaussian mechanism over the whole stream: the integer vector K d
    (one item changes it by a column of K, squared norm n2, exact integers; for ``sqrt_factorization`` and ``blt``
    the sum of the K_k^2) plus discrete Gaussian noise of variance sigma^2 (lattice units): n2 / (2 sigma^2)-zCDP
    (CKS Thm 4). Under ZCDP(rho) that loss is at most rho; under an (eps, delta) budget its CKS conversion is at most
    eps at the configured delta (the ledger charges the configured budget). And not far below either: the noise is
    calibrated to the budget, not inflated (within the rounding of sigma^2 up).

    Kills ``counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_calibrate__mutmut_4`` (the noise kind test
    inverted: under an (eps, delta) budget the Gaussian counters take the Laplace formula s1 / eps as sigma^2, about
    10^-7 of the variance needed: the releases are nearly exact; it raised only under ZCDP and pure DP)."""
    from transforms.core.foundation.accounting.calibration import zcdp_epsilon

    c = make_counter(name, CountMechanism(noise="gaussian"), budget, horizon=64)
    n2 = c._tab.n2
    if name in ("sqrt_factorization", "blt"):
        assert n2 == sum(int(v) * int(v) for v in c._tab.cint)
    rho = n2 / (2 * float(c.noise_param))
    if isinstance(budget, ZCDP):
        assert budget.rho * (1 - 1e-9) <= rho <= budget.rho
    else:
        eps = zcdp_epsilon(rho, budget.delta)
        assert budget.epsilon * (1 - 1e-6) <= eps <= budget.epsilon * (1 + 1e-12)
