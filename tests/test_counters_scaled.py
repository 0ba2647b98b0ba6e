"""``scaled_sqrt``: the square root with an optimised diagonal between its factors, exact
on the lattice (``transforms/core/counters/factorization/scaled.py``, ``docs/counters.md``):
noise off equals the prefix sums, the exact max column norm against brute force, the
calibration, the released shift on neighbouring streams against the calibrated noise (a
mis-scaled twin fails), the variance table, the measured variance, the state round trip and
``auto``'s choice."""

import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from transforms.core.counters import COUNTER_NAMES, FINITE_COUNTERS, make_counter
from transforms.core.counters.factorization import LATTICE_BITS, toeplitz_variance_path
from transforms.core.counters.factorization.lattice import sqrt_tables
from transforms.core.counters.factorization.scaled import (
    SCALE_BITS,
    SCALED_TABLE,
    ScaledSqrtCounter,
    lattice_max_variance,
    max_column_norm_sq,
    optimize_scaled,
    scale_bits,
    scaled_diagonal,
    scaled_tables,
    scaled_variance_path,
)
from transforms.core.foundation import state as state_mod
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP
from transforms.core.foundation.noise import NoiseSource, as_ratio_up
from transforms.core.static import CountMechanism, HistogramMechanism, LinearQueryMechanism

G = 2.0**-LATTICE_BITS


def key(tag: str) -> NoiseSource:
    return NoiseSource(tag.encode().ljust(32, b"\0"))


def test_registered_finite_and_gaussian_diagonal():
    assert "scaled_sqrt" in COUNTER_NAMES and "scaled_sqrt" in FINITE_COUNTERS
    with pytest.raises(ValueError, match="needs a horizon"):
        make_counter("scaled_sqrt", CountMechanism(1, "gaussian"), ZCDP(1.0))
    s = scaled_diagonal(1000)
    assert s.max() == 1 << scale_bits(1000) == 1 << SCALE_BITS and s.min() > 0.9 * (1 << SCALE_BITS)
    assert np.all(np.diff(s) >= 0)  # grows along the stream (the early columns are the heavy ones)
    lap = make_counter("scaled_sqrt", CountMechanism(1, "laplace"), PureDP(1.0), horizon=50)
    assert np.all(lap._tab.s == 1)  # pure DP: the square root itself


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_noise_off_exact_histogram(kind, no_noise):
    mech = HistogramMechanism(5, kind)
    c = make_counter("scaled_sqrt", mech, PureDP(1.0) if kind == "laplace" else ZCDP(0.5), horizon=300)
    rng = np.random.default_rng(7)
    prefix = np.zeros(5)
    for t in range(300):
        b = None if t % 7 == 3 else rng.integers(-3, 6, 5)
        prefix += 0 if b is None else b
        np.testing.assert_array_equal(c.step(b, no_noise), prefix)
        assert c.error_bound(0.1) == 0.0


def test_noise_off_exact_huge_batches_and_linear_queries(no_noise):
    """A batch of 2^40 items leaves the float64 encoder (s1 smax max|d| >= 2^53): still exact."""
    c = make_counter("scaled_sqrt", CountMechanism(3, "gaussian"), ZCDP(1.0), horizon=64)
    prefix = 0
    for t in range(64):
        b = np.array([1, 2, 3]) if t != 20 else np.array([2**40, 0, -5])
        prefix += int(b.sum())
        assert abs(c.step(b, no_noise)[0] - prefix) <= 1e-12 * abs(prefix)
    assert not c._float_mode
    mech = LinearQueryMechanism([[1, 0, 1], [0.5, 0.5, 0.25]], "gaussian")
    c = make_counter("scaled_sqrt", mech, ZCDP(1.0), horizon=40)
    h = np.zeros(3)
    rng = np.random.default_rng(3)
    for _ in range(40):
        b = rng.integers(0, 4, 3)
        h += b
        np.testing.assert_allclose(c.step(b, no_noise), mech.exact(h), rtol=1e-12)


def _brute_columns(s, cint) -> list[int]:
    s, c = [int(v) for v in s], [int(v) for v in cint[: len(s)]]
    T = len(s)
    return [sum(s[j + m] ** 2 * c[m] ** 2 for m in range(T - j)) for j in range(T)]


@pytest.mark.parametrize("T", [1, 2, 7, 300])
def test_max_column_norm_is_the_brute_force_max(T):
    tab = scaled_tables(T)
    assert tab.n2 == max(_brute_columns(tab.s, tab.cint >> tab.shift))


def test_max_column_norm_exact_on_arbitrary_integers():
    """Random diagonals up to 2^13 (2^26 squared) and coefficients up to 2^22: every limb and carry counts."""
    rng = np.random.default_rng(11)
    for T in (5, 64, 333):
        s = rng.integers(1, 1 << 13, T)
        c = rng.integers(1, 1 << 22, T)
        assert max_column_norm_sq(s, c) == max(_brute_columns(s, c))


def test_noise_parameter_is_the_exact_calibration():
    for budget, l2sq in ((ZCDP(0.3), 1), (ZCDP(2.0), 1)):
        c = make_counter("scaled_sqrt", HistogramMechanism(4, "gaussian"), budget, horizon=100)
        n2 = max(_brute_columns(c._tab.s, c._tab.cint >> c._tab.shift))
        assert c.noise_param == as_ratio_up(Fraction(n2 * l2sq) / (2 * Fraction(budget.rho)))
    c = make_counter("scaled_sqrt", CountMechanism(1, "gaussian"), ApproxDP(1.0, 1e-6), horizon=100)
    assert c.noise_param > 0


def _released(counter_factory, item_at: int | None, T: int) -> np.ndarray:
    """The integer releases yhat (lattice units of diag(s) K) of one count stream, noise off."""
    c = counter_factory()
    c.release_log = []
    off = NoiseSource.disabled()
    for t in range(1, T + 1):
        c.step(np.array([1]) if t == item_at else None, off)
    return np.array([int(round(v[0] / G)) for _, _, v in c.release_log], dtype=object)


@pytest.mark.parametrize("T", [40, 257])
def test_neighbouring_streams_move_the_release_by_at_most_the_calibrated_sensitivity(T):
    """Exact privacy check: for every position s of the extra item, the release moves by an
    integer vector of squared norm <= n2 (the value the noise is calibrated to, sigma^2 =
    n2 / (2 rho)); equality at the heaviest column. A mis-scaled twin calibrated to the first
    column (the square root's largest) under-states it: some neighbour moves further."""
    factory = lambda: make_counter("scaled_sqrt", CountMechanism(1, "gaussian"), ZCDP(0.5), horizon=T)  # noqa: E731
    base = _released(factory, None, T)
    shifts = [sum(int(v) ** 2 for v in _released(factory, s, T) - base) for s in range(1, T + 1)]
    c = factory()
    assert max(shifts) == c._tab.n2
    assert c.noise_param == as_ratio_up(Fraction(max(shifts)) / 1)  # rho = 0.5: sigma^2 = n2
    twin_n2 = shifts[0]  # the twin's calibration: column 0
    assert max(shifts) > twin_n2


def test_max_variance_against_the_square_root_and_the_literature():
    """rho = 1, count: within 1.02x of Henzinger-Kalinin-Upadhyay's explicit factorization as the
    issue states it (4.66 at 2^10: 4.75319, 1.01999x since row 10 was polished on the lattice;
    8.63 at 2^15: 8.7479, 1.0137x) and below the square root at every power of two 2^4..2^12."""
    for L, ref, got in ((10, 4.66, 4.75319), (15, 8.63, 8.7479)):
        v = scaled_variance_path(1 << L).max()
        assert v <= 1.02 * ref and v == pytest.approx(got, abs=1e-4), (L, v)
    for L in range(4, 13):
        v, vs = scaled_variance_path(1 << L).max(), toeplitz_variance_path("sqrt_factorization", 1 << L).max()
        assert v < 0.9 * vs if L >= 8 else v < vs, (L, v, vs)


def test_lattice_figure_of_row_10_and_its_unpolished_twin():
    """``lattice_max_variance`` is the counter's own figure (the table's coefficients: the max of
    ``scaled_variance_path``); row 10 polished on it is below 1.02 x 4.66 at 2^10, the row before
    the polish (optimize_scaled's, the broken twin) is not (4.75379, 1.0201x)."""
    assert lattice_max_variance(1 << 10) == scaled_variance_path(1 << 10).max()
    assert lattice_max_variance(300) == scaled_variance_path(300).max()
    assert lattice_max_variance(1 << 10, SCALED_TABLE[10]) <= 1.02 * 4.66
    unpolished = (
        -0.03356777845407487, -1.3802618677997186e-11, -0.00092720353891941, -1.3405777648382697e-10,
        -0.0011961559906187933, -1.5104489755986743e-10, -0.0002768944024431666, 1.0867651815471405e-10,
        -0.00035380912183235276, 2.7913705684587653e-10, -0.00011898513650369249, 5.12588632028431e-12,
        -0.00015942981048277206, -2.8076776258561507e-11, -1.6598131833942667e-05, 3.8397538036830855e-11,
    )  # fmt: skip
    twin = lattice_max_variance(1 << 10, unpolished)
    assert twin == pytest.approx(4.75379, abs=1e-5) and twin > 1.02 * 4.66


def test_variance_is_the_decoder_row_norm():
    """The reported variance at t is sigma^2 g^2 ||row_t of S (diag(s) K)^-1||^2, the row computed
    by solving with the dense matrix (T = 60)."""
    T = 60
    c = make_counter("scaled_sqrt", CountMechanism(1, "gaussian"), ZCDP(1.0), horizon=T)
    tab = c._tab
    K = np.zeros((T, T))
    for i in range(T):
        K[i, : i + 1] = tab.s_f[i] * (tab.cint[: i + 1][::-1] >> tab.shift).astype(np.float64)
    W = np.tril(np.ones((T, T))) @ np.linalg.inv(K)  # per unit of lattice noise
    noise = key("rows")
    for t in range(T):
        c.step(None, noise)
        want = float(c.noise_param) * np.sum(W[t] ** 2)
        assert want <= c.variance() <= want * (1 + 2e-9)  # rounded up by 1e-9 (FFT slack)


@pytest.mark.statistical
def test_variance_formula_measured():
    """3000 independent cells, T = 24: at every t the reported variance equals the empirical mean
    square of the estimates (|z| below the two-sided 1e-6 / 24 quantile, standard error from the
    sample fourth moment): false failure < 1e-6."""
    cells, T = 3000, 24
    c = make_counter("scaled_sqrt", HistogramMechanism(cells, "gaussian"), ZCDP(0.5), horizon=T)
    noise = key("scaled/var")
    z_crit = stats.norm.isf(1e-6 / (2 * T))
    for t in range(T):
        x2 = c.step(None, noise) ** 2
        se = math.sqrt(np.var(x2) / cells)
        assert abs(x2.mean() - c.variance()) < z_crit * se, (t, x2.mean(), c.variance(), se)


def test_state_round_trip_and_pickle_continue_identically():
    noise = key("state")
    c = ScaledSqrtCounter(HistogramMechanism(3, "gaussian"), ZCDP(1.0), horizon=80, coords=("st",))
    for t in range(37):
        c.step(np.array([t % 3, 1, 0]), noise)
    plain = state_mod.to_plain(c)
    assert "_tab" not in plain["f"]
    c2 = state_mod.restore(state_mod.decode(state_mod.encode(plain)))
    c3 = pickle.loads(pickle.dumps(c))
    for t in range(40):
        b = np.array([1, t % 2, 2])
        out = c.step(b, noise)
        np.testing.assert_array_equal(out, c2.step(b, noise))
        np.testing.assert_array_equal(out, c3.step(b, noise))
        assert c.error_bound(0.05) == c2.error_bound(0.05) == c3.error_bound(0.05)


def test_table_entries_and_the_optimiser():
    """The table covers 2^1..2^20; the optimiser reproduces the 2^8 entry's max variance."""
    assert set(range(1, 21)) <= set(SCALED_TABLE)
    coef, v = optimize_scaled(8, start=SCALED_TABLE[7])
    assert v == pytest.approx(3.502, abs=2e-3)


def test_auto_picks_scaled_sqrt_for_bounded_gaussian_update_level_runs():
    from transforms.core.continual.auto import auto_counter

    assert auto_counter("gaussian", 1000) == "scaled_sqrt"
    assert auto_counter("gaussian", 1000, "person") == "sqrt_factorization"
    assert auto_counter("laplace", 1000) == "kary_tree"
    assert auto_counter("gaussian", 1) == "sqrt_factorization"
    assert auto_counter("gaussian", None) == "anytime_sqrt"  # no end (auto.py says why)
    assert auto_counter("gaussian", None, "entry") == "anytime_sqrt"
    assert auto_counter("laplace", None) == "infinite_honaker"


def test_pure_dp_is_the_square_root():
    lap, sq = scaled_tables(128, False), sqrt_tables(128)
    assert lap.shift == 0 and np.array_equal(lap.cint, sq.cint) and lap.n2 == sq.n2


@pytest.mark.parametrize("step", ["random", "nan"])
def test_polish_scaled_never_ends_above_its_start_even_when_its_stages_go_astray(monkeypatch, step):
    """``polish_scaled`` returns ``start`` itself when nothing it found is lower on the lattice: its L-BFGS stages
    optimise a float model, whose optimum can sit on a worse lattice point (or on coefficients that are no counter:
    a figure of NaN), and its later stages only accept improvements of what the first ones reached. Here every
    scipy stage is made to return a worse point (the twin: without the start kept, the polish returns that point)."""
    import scipy.optimize

    from transforms.core.counters.factorization import scaled as scaled_mod

    rng = np.random.default_rng(1)

    class Astray:
        def __init__(self, x0):
            move = 0.3 * rng.standard_normal(len(x0)) if step == "random" else 0.5
            self.x = np.asarray(x0, dtype=np.float64) + move
            self.fun = float("inf")

    monkeypatch.setattr(scipy.optimize, "minimize", lambda f, x0, **k: Astray(x0))
    start = scaled_mod.SCALED_TABLE[3]
    coef, best = scaled_mod.polish_scaled(3, start, evaluations=0)
    assert coef == tuple(map(float, start))
    assert best == scaled_mod.lattice_max_variance(8, start)
