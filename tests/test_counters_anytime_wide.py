"""``anytime_sqrt`` past the lattice counters' two-limb int64 encoder (issue 31: no 2^21-step limit) and
``auto``'s choice for a run without an end (``transforms/core/counters/factorization/anytime.py``,
``transforms/core/continual/auto.py``, ``docs/counters.md``).

The wide encoder is exercised cheaply by lowering the counter's ``narrow_s1`` (the s1 from which it is
used): the same integers, so the same releases as the two-limb encoder; the real boundary (the tables
of 2^22 steps, whose coefficients sum past 2^31) by a seeded state near it (slow: the 2^22 tables)."""

import numpy as np
import pytest

from transforms.core.continual.auto import auto_counter
from transforms.core.counters import make_counter
from transforms.core.counters.factorization import anytime as anytime_mod
from transforms.core.counters.factorization.anytime import (
    MERGE_T1,
    AnytimeSqrtCounter,
    WideTables,
    anytime_tables,
    anytime_variance_path,
    limb_dot,
    limb_width,
)
from transforms.core.foundation.accounting import ZCDP
from transforms.core.foundation.noise import NoiseSource
from transforms.core.static import HistogramMechanism


def key(tag: str) -> NoiseSource:
    return NoiseSource(tag.encode().ljust(32, b"\0"))


def test_limb_dot_is_exact_for_large_coefficient_sums():
    """Random int64 inputs up to 2^62 in magnitude against coefficients summing to about 2^40 (a 2^40-step
    table's size): equal to the Python-int dot product (a two-limb split would overflow int64 there)."""
    rng = np.random.default_rng(3)
    c = rng.integers(1, 1 << 29, 4096).astype(np.int64)
    s1 = int(c.sum())
    assert s1 >= 1 << 39 and limb_width(s1) >= 2
    win = rng.integers(-(1 << 62) + 1, 1 << 62, (4096, 3), dtype=np.int64)
    win[:5] = [[(1 << 62) - 1, -(1 << 62) + 1, 0]] * 5
    want = [sum(int(a) * int(b) for a, b in zip(c, win[:, j])) for j in range(3)]
    assert limb_dot(c, win, s1) == want


@pytest.mark.parametrize("profile, steps, cap", [(2, 600, 1024), (3, 1300, 512), (4, 1300, 512)])
def test_wide_encoder_releases_what_the_two_limb_encoder_releases(profile, steps, cap):
    """The same noise, signed batches and a batch of about 2^61 (the int64 path): every release of a
    counter using the wide limbs from its first step equals the ordinary counter's, across the doublings
    (profile 2: at 256 and 512; profile 3: its first phase, the hand-over of a merged item near 2^61 after
    896 steps, then positions 256 to 405)."""
    noise = key("anytime/wide")
    a = AnytimeSqrtCounter(HistogramMechanism(3, "gaussian"), ZCDP(1.0), profile=profile)
    b = AnytimeSqrtCounter(HistogramMechanism(3, "gaussian"), ZCDP(1.0), profile=profile)
    b.narrow_s1 = 1
    rng = np.random.default_rng(1)
    for t in range(steps):
        x = np.array([2**61, -(2**61) + 7, 5]) if t == 300 else rng.integers(-3, 6, 3)
        np.testing.assert_array_equal(a.step(x, noise), b.step(x, noise))
    assert not a._float_mode and not b._float_mode and b.cap == cap


def _steps_to_prefix_sums(c, steps: int, seed: int, noise) -> None:
    """``steps`` random signed batches of 2 cells through ``c``: every release is the prefix sum (noise off)."""
    rng = np.random.default_rng(seed)
    prefix = np.zeros(2)
    for _ in range(steps):
        b = rng.integers(-4, 9, 2)
        prefix += b
        np.testing.assert_array_equal(c.step(b, noise), prefix)


def test_wide_encoder_noise_off_equals_prefix_sums(no_noise):
    c = make_counter("anytime_sqrt", HistogramMechanism(2, "gaussian"), ZCDP(1.0))
    c.narrow_s1 = 1
    _steps_to_prefix_sums(c, 300, 2, no_noise)


def test_auto_picks_anytime_sqrt_for_a_gaussian_run_without_an_end():
    assert auto_counter("gaussian", None) == "anytime_sqrt"
    assert auto_counter("gaussian", None, "entry") == "anytime_sqrt"  # by contribution (Lemma A1)
    assert auto_counter("gaussian", None, "person") == "anytime_sqrt"
    assert auto_counter("laplace", None) == "infinite_honaker"
    assert auto_counter("gaussian", 4096) == "scaled_sqrt"


OLD_LIMIT = 1 << 21  # the first version refused to step past it


def _seeded(t0: int, m: int, rng) -> tuple:
    """A counter as if it had stepped t0 times (noise off) through random small batches: the tables of
    OLD_LIMIT steps, the windows holding the batches (noise off, the decoded rows are the batches)."""
    c = AnytimeSqrtCounter(HistogramMechanism(m, "gaussian"), ZCDP(1.0), profile=2)
    c.cap = OLD_LIMIT
    c._tab = anytime_tables(c.cap, 2)
    c.window = c._tab.size
    hist = rng.integers(-3, 6, (t0, m)).astype(np.float64)
    for w in (c._d, c._x):
        w.keep, w.limit = c.window, 2 * c.window
        w.arr = np.zeros((c.window, m))
        w.arr[:t0] = hist
        w.n = t0
    c.t, c._acc, c._dmax = t0, hist.sum(axis=0), 5
    c._bsq = float(c._tab.bsq[t0 - 1])
    return c, hist.sum(axis=0)


@pytest.mark.slow  # the tables of 2^21 and 2^22 steps (series inverses of those lengths): 10-30 s
def test_noise_off_exact_across_the_old_step_limit(no_noise):
    """A counter seeded at t = 2^21 - 3 steps (the first version refused step 2^21 + 1): the tables
    double to 2^22 steps and the releases stay the prefix sums, in float mode and, after a 2^40 batch,
    in int64 limbs."""
    rng = np.random.default_rng(4)
    c, prefix = _seeded(OLD_LIMIT - 3, 2, rng)
    for t in range(8):
        b = np.array([1 << 40, -7]) if t == 5 else rng.integers(-3, 6, 2)
        prefix = prefix + b
        out = c.step(b, no_noise)
        if t < 5:
            np.testing.assert_array_equal(out, prefix)
        else:
            np.testing.assert_allclose(out, prefix, rtol=1e-12)
    assert c.cap == 2 * OLD_LIMIT and not c._float_mode


def test_wide_tables_accept_what_lattice_tables_refuse():
    """Coefficients summing past 2^31 (2^20, then 2100 times 2^20 - 1): ``LatticeTables`` refuses them,
    ``WideTables`` holds them with the exact s1 and n2."""
    from transforms.core.counters.factorization.lattice import LatticeTables

    cint = np.array([1 << 20] + [(1 << 20) - 1] * 2100, dtype=np.int64)
    with pytest.raises(ValueError):
        LatticeTables(cint, 64)
    tab = WideTables(cint, 64)
    vals = cint.tolist()
    assert tab.s1 == sum(vals) >= 1 << 31 and tab.n2 == sum(v * v for v in vals)
    assert len(tab.b) == 64 and tab.size == 2101


def test_wide_tables_take_the_zeros_the_floor_reaches_and_refuse_negative_or_rising_coefficients():
    """Where ``c_k h(k) 2^20 < 1`` the floored coefficient is 0, and 0 from there on (non-increasing): the column
    has finite support. ``WideTables`` holds such coefficients with their exact s1 and n2 (the zeros add
    nothing); a negative coefficient, or one rising after a 0, is refused."""
    cint = np.array([1 << 20, 1 << 19, 40, 3, 0, 0], dtype=np.int64)
    tab = WideTables(cint, 16)
    assert tab.s1 == (1 << 20) + (1 << 19) + 43 and tab.n2 == (1 << 40) + (1 << 38) + 1600 + 9
    assert np.all(np.isfinite(tab.b)) and tab.bsq[-1] > tab.bsq[0]
    for bad in ([1 << 20, 1 << 19, -1, -1], [1 << 20, 1 << 19, 0, 1]):
        with pytest.raises(AssertionError, match="non-negative"):
            WideTables(np.array(bad, dtype=np.int64), 16)


@pytest.fixture
def short_support(monkeypatch):
    """Profile 4's coefficients cut to 0 from k = 200 on (as the floor does past 24.8 million steps), with the
    tables' and the bound's caches cleared before and after (no other test sees them)."""
    real = anytime_mod.anytime_coefficients

    def cut(n, profile=anytime_mod.PROFILE):
        k = real(n, profile).copy()
        k[200:] = 0
        return k

    for f in (anytime_mod.anytime_tables, anytime_mod.merge_tables, anytime_mod.anytime_sensitivity_sq):
        f.cache_clear()
    monkeypatch.setattr(anytime_mod, "anytime_coefficients", cut)
    yield
    monkeypatch.undo()
    for f in (anytime_mod.anytime_tables, anytime_mod.merge_tables, anytime_mod.anytime_sensitivity_sq):
        f.cache_clear()


def test_noise_off_exact_once_the_column_reaches_zero(short_support, no_noise):
    """A counter whose coefficients are 0 from lag 200 (its tables then ``WideTables``, whatever their sum) steps
    through the hand-over at 896 and the doublings after it with the prefix sums as its releases, noise off, and
    states a finite variance; its tables hold the zeros."""
    c = AnytimeSqrtCounter(HistogramMechanism(2, "gaussian"), ZCDP(1.0), profile=4)
    _steps_to_prefix_sums(c, 1500, 7, no_noise)
    assert isinstance(c._tab, WideTables) and int(c._tab.cint[-1]) == 0 and c.cap == 1024
    assert np.isfinite(c.variance()) and c.variance() > 0


@pytest.mark.slow  # the tables of 2^25 steps (a series inverse of that length): 40-60 s and 4.5 GB
def test_profile_4_grows_past_its_first_zero_coefficient():
    """Profile 4's floored coefficients reach 0 at k = 24,837,213 (``c_k h(k) 2^20 < 1`` under its fast tail):
    the table of 2^25 steps, which a counter needs after 2^24 + 896 steps, holds 8.7 million zeros and builds
    (the first version of profile 4 raised here: ``WideTables`` refused zeros); a counter at that step grows to
    it, and the stated variance continues past it."""
    tab = anytime_tables(1 << 25, 4)
    first = int(np.argmax(tab.cint == 0))
    assert isinstance(tab, WideTables) and 24_800_000 < first < 24_900_000 and int(tab.cint[first - 1]) == 1
    c = AnytimeSqrtCounter(HistogramMechanism(1, "gaussian"), ZCDP(1.0), profile=4)
    c.base_t, c.t, c.cap = MERGE_T1 - 1, MERGE_T1 - 1 + (1 << 24), 1 << 24
    c._grow()
    assert c.cap == 1 << 25 and c._tab is tab
    v = anytime_variance_path((1 << 24) + 4000, profile=4)
    assert np.all(np.isfinite(v)) and np.all(np.diff(v[-3000:]) > 0)
