"""Tests written for the survivors of the mutation round of stop 56: the functions of ``transforms/core/`` whose
body changed since the previous sample (commit 9ad19d7), mutants on the changed lines (``benchmarks/mutation_fast.py
run --names benchmarks/mutation_runs/s56/names.txt``). Each asserts a property the code states (a search's result
and its cost, the tail bound's premises, the integral it evaluates, a model's documented attributes, a witness that
reaches an exact bound, a stored field), never a pinned value, and names in a comment the mutant(s) it kills
(checked with ``python -m benchmarks.mutation_fast confirm``: passes without the mutant, fails with it). In memory,
no Beam, deterministic: no false-failure rate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from transforms.core import QuerySet
from transforms.core.continual.auto import auto_counter
from transforms.core.contribution import ContributionUnit, contribution_sensitivity
from transforms.core.contribution import toeplitz as toeplitz_mod
from transforms.core.contribution.toeplitz import toeplitz_model
from transforms.core.counters.factorization import LATTICE_BITS
from transforms.core.counters.factorization import anytime as anytime_mod
from transforms.core.counters.factorization.anytime import (
    MERGE_T1,
    N2,
    PhaseTables,
    anytime_coefficients,
    anytime_sensitivity_sq,
    anytime_tables,
    anytime_variance_path,
)
from transforms.core.foundation import samplers
from transforms.core.foundation.random_stream import RandomStream

COUNT = QuerySet("n", "count")


# ---------------------------------------------------------------------------------------------------------------------
# foundation/samplers.py: the exact geometric's search (walk, then gallop and bisection)
# ---------------------------------------------------------------------------------------------------------------------


class Comparator:
    """``le_qk`` of a U whose answer is ``x``: ``le(k)`` is 1 (U <= q^k) for ``k <= x``, -1 above, and 0
    (undecided at this precision) at the points of ``undecided``. Records every probe; refuses a probe that is not
    an integer (q^k of a law on the integers) and more probes than the search's stated cost allows."""

    def __init__(self, x: int, undecided=(), limit: int = 10_000):
        self.x, self.undecided, self.limit, self.probes = x, set(undecided), limit, []

    def __call__(self, k):
        assert type(k) is int, f"a probe at {k!r}: the search compares q^k at integers only"
        self.probes.append(k)
        assert len(self.probes) <= self.limit, "more comparisons than the walk, the gallop and the bisection need"
        if k in self.undecided:
            return 0
        return 1 if k <= self.x else -1


def _cost(start: int, x: int) -> int:
    """The comparisons ``_search`` needs: two a step of the walk towards X (``|start - X|`` steps and the last
    check, when X is within the walk), else the whole walk, then one a doubling step and one a bisection step (each
    O(log2 of the distance)), and the check between them."""
    if abs(start - x) < samplers.WALK_BEFORE_GALLOP:
        return 2 * (abs(start - x) + 1)
    return 2 * samplers.WALK_BEFORE_GALLOP + 4 * (abs(start - x).bit_length() + 2) + 2


STARTS = (0, 1, 3, 60, 63, 64, 65, 66, 130, 1000, 70_000)


# kills transforms.core.foundation.samplers.x__search__mutmut_5, _17, _18, _20, _22, _23, _24, _27, _28, _29, _31,
# _35, _36, _37, _38, _39, _40, _42, _43, _47, _49, _50, _51, _53, _57, _58, _61, _64, _67, _71, _72, _74, _75, _77,
# _79, _81, _83, _84, _85, _86 (the walk stepping the wrong way, by 2, to 1, or comparing k - 1; the check after the
# walk on None or inverted; the gallop giving up on a decided comparison, probing below - step or None, stepping by
# halves, bracketing at below - step, nowhere, or never entering its loop; the bisection at (a + b) / 2, // 3 or
# None, giving up on a decided middle, looping while the bracket is 1 wide, or losing an end: a wrong X, a float X,
# a search that never ends or costs more than the walk, the gallop and the bisection, or one that gives up with
# every comparison decided; _35, _51, _53, _85, _86 only raise a TypeError: loud)
@pytest.mark.parametrize("x", [0, 1, 5, 64, 200, 5000, 1 << 20])
def test_search_finds_x_from_any_start_when_every_comparison_is_decided(x):
    """``_search(le_qk, k)`` returns ``(True, X)`` whenever every comparison is decided, from any start ``k >= 0``
    (``_geometric_exact`` starts at ``max(guess, 0)``), near X (a walk of single steps towards X: two comparisons
    a step) or far above or below it (the gallop and the bisection), probing integers only and within that cost."""
    for d in STARTS:
        for start in {x + d, max(x - d, 0)}:
            le = Comparator(x, limit=_cost(start, x))
            assert samplers._search(le, start) == (True, x), (start, x)
            assert le.probes


# kills transforms.core.foundation.samplers.x__search__mutmut_30, _59, _60 (an undecided comparison, after the walk or
# in the downward gallop, returned as "found": a value of the geometric that is not X, with U on q^k's boundary
# undecided; _60: the downward gallop going on from above + step, past the boundary it could not decide)
@pytest.mark.parametrize("x", [3, 100, 5000])
@pytest.mark.parametrize("side", [0, 1])
def test_search_says_found_only_for_x_and_resumes_to_x_after_a_refinement(x, side):
    """With U on a boundary (``le(x + side)`` undecided at this precision) the search may stop and ask for more bits
    (``found`` False): it never says ``found`` with a value other than X; it goes on from the undecided boundary or
    below it (where the comparisons said U <= q^k), and from there the same search with U refined (every comparison
    decided) finds X. Starts near X, 64 away (the walk ends on the undecided
    point) and far away (the gallop and the bisection meet it)."""
    k0 = x + side
    for start in (x, x + 1, k0 + samplers.WALK_BEFORE_GALLOP, k0 + 65, x + 1000, max(k0 - 64, 0), max(k0 - 900, 0)):
        found, k = samplers._search(Comparator(x, undecided={k0}, limit=_cost(start, x) + 4), start)
        assert type(k) is int and k >= 0
        if found:
            assert k == x, (start, k)
        else:  # it goes on from the boundary it could not decide or below it, never from past it
            assert k <= k0, (start, k)
            assert samplers._search(Comparator(x, limit=_cost(k, x)), k) == (True, x)


# kills transforms.core.foundation.samplers.x__geometric_inversion_small__mutmut_29 (the float guess taken at
# ln(2 (u_lo + u_hi)) instead of ln((u_lo + u_hi) / 2): every draw then fails the band check and goes to the exact
# search, which gives the same X from a guess ln 4 / |ln q| steps off: exact, but every small draw on the slow path)
@pytest.mark.parametrize("scale", [0.7, 3.0, 40.0, 1000.0])
def test_the_float_guess_decides_every_small_draw_outside_the_band(monkeypatch, scale):
    """``geometric_inversion``'s docstring: the float guess ``floor(ln U / ln q)`` is accepted when U lies outside
    a relative band of 2^-30 around both boundaries (and ``X |ln q| < 2^12``); only the others go to
    :func:`_geometric_exact`. Over 600 uniformly drawn words (a draw lands in the band with probability about
    2^-29 a boundary: none here, the seed fixed) the small-draw path calls the exact search for none of them, and
    every X it returns is ``max{k: U <= q^k}`` for U in the word's interval."""
    calls = []
    real = samplers._geometric_exact

    def spy(*a):
        calls.append(a)
        return real(*a)

    monkeypatch.setattr(samplers, "_geometric_exact", spy)
    rng = np.random.default_rng(56)
    t, s = int(scale * 1000), 1000
    lnq = -s / t
    for _ in range(50):
        w = rng.integers(1 << 20, 1 << 63, size=12, dtype=np.uint64) * np.uint64(2)
        out = samplers._geometric_inversion_small(RandomStream(bytes(32)), w, t, s, lnq)
        for wi, x in zip(w.tolist(), out.tolist()):
            u = wi * 2.0**-64
            assert u <= math.exp(x * lnq) and u > math.exp((x + 1) * lnq)
    assert calls == []


# ---------------------------------------------------------------------------------------------------------------------
# counters/factorization/anytime.py: profile 3's damping, its tail bound's premises, the variance path
# ---------------------------------------------------------------------------------------------------------------------


# kills transforms.core.counters.factorization.anytime.x__check_knots__mutmut_5, _6, _11, _14, _17, _18, _19, _21, _24,
# _29, _30, _31 (the check of the knots' premises (start at (0, 0), increasing, every slope at most ln 2 an octave)
# crashing on the real knots (_5, _6, _11, _24, _30: loud), refusing them, slopes taken against the wrong values,
# accepting a first knot or a first value that is not 0, or slopes up to ln 3, or refusing a slope of exactly ln 2)
@pytest.mark.parametrize(
    "knots,values",
    [
        ((-1.0, 0.0, 2.0, 24.0), (0.0, 0.0, 0.1, -1.0)),  # the first knot is not 0
        ((0.0, 2.0, 24.0), (0.5, 0.4, -1.0)),  # h(0)^2 is not 1
        ((0.0, 3.0, 2.0, 24.0), (0.0, 0.1, 0.1, -1.0)),  # knots not increasing
        ((0.0, 2.0, 2.0, 24.0), (0.0, 0.1, 0.2, -1.0)),  # two equal knots (refused by the check, not by a division)
        ((0.0, 2.0, 3.0, 24.0), (0.0, 0.1, 0.1 + 0.9, -1.0)),  # a slope of 0.9 > ln 2 (below ln 3)
        ((0.0, 2.0, 24.5), (0.0, 0.1, -1.0)),  # the last knot past log2(1 + N2): h(N2)^2 is not exp(values[-1])
    ],
    ids=["first-knot", "first-value", "not-increasing", "equal", "slope", "last-knot"],
)
@pytest.mark.parametrize("profile", [3, 4])
def test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises(monkeypatch, knots, values, profile):
    """The tail bound's sum-to-integral step needs h(u)^2 / u non-increasing past EXACT_TERMS and ln h^2 = 0 at
    k = 0: ``_check_knots`` passes each knot profile's own knots and refuses each kind of violation in either."""
    names = ("KNOTS3", "LOGH2_3") if profile == 3 else ("KNOTS4", "LOGH2_4")
    anytime_mod._check_knots()  # the profiles' knots meet them
    with monkeypatch.context() as m:  # a slope of exactly ln 2 an octave meets them too (h^2 / u non-increasing)
        m.setattr(anytime_mod, names[0], (0.0, 2.0, 24.0))
        m.setattr(anytime_mod, names[1], (0.0, 2.0 * math.log(2.0), -1.0))
        anytime_mod._check_knots()
    monkeypatch.setattr(anytime_mod, names[0], knots)
    monkeypatch.setattr(anytime_mod, names[1], values)
    with pytest.raises(AssertionError, match=f"profile {profile}'s knots"):
        anytime_mod._check_knots()


# kills transforms.core.counters.factorization.anytime.x__damping_block__mutmut_73, _75, _86 (past N2 = 2^24 the
# damping multiplied by (1 + B3 ln(k / N2))^(+Q3/2), by (1 - B3 ln(k / N2))^(-Q3/2) or with exponent -Q3/3: a
# damping that grows, or decays slower than the tail bound integrates, past 2^24 steps: columns above n2)
@pytest.mark.parametrize("profile", [3, 4])
def test_profile_3_damping_past_n2_is_what_the_tail_bound_integrates(profile):
    """The module docstring: past N2, h(k)^2 = h(N2)^2 (1 + B ln(k / N2))^-Q (B3, Q3; profile 4: B4, Q4), which is
    what ``anytime_tail_bound`` integrates in closed form; so h is non-increasing there and never above that law."""
    b, q = (anytime_mod.B3, anytime_mod.Q3) if profile == 3 else (anytime_mod.B4, anytime_mod.Q4)
    first = int(N2) // anytime_mod._BLOCK
    h_n2 = float(anytime_mod._damping_block(first, profile)[0])
    for i in (first, first + 1, first + 4096, first + 100_000):
        k = np.arange(i * anytime_mod._BLOCK, (i + 1) * anytime_mod._BLOCK, dtype=np.float64)
        h = anytime_mod._damping_block(i, profile)
        law = h_n2 * (1.0 + b * np.log(k / N2)) ** (-q / 2)
        assert np.all(np.diff(h) <= 0) and np.all(h <= law * (1 + 1e-12)), i
        assert np.allclose(h, law, rtol=1e-12, atol=0.0)


# kills transforms.core.counters.factorization.anytime.x_knot_integral__mutmut_7 (the integral taken to
# log2(2 + N2) instead of log2(1 + N2): the integral of h^2 / (1 + u) to N2 + 1, not N2)
@pytest.mark.parametrize("profile", [3, 4])
@pytest.mark.parametrize("x", [float(1 << 21), 3.0e6, float(1 << 23), N2 - 4096.0])
def test_knot_integral_is_the_integral_it_names(x, profile):
    """``knot_integral(x, knots, values) = int_x^N2 h(u)^2 / (1 + u) du`` with h^2 = exp(interp(log2(1 + u), knots,
    values)) (profiles 3 and 4 below N2): checked against adaptive quadrature in w = ln(1 + u) (du / (1 + u) = dw),
    piece by piece between the knots, to a relative 1e-11."""
    knots, values = (
        (anytime_mod.KNOTS3, anytime_mod.LOGH2_3) if profile == 3 else (anytime_mod.KNOTS4, anytime_mod.LOGH2_4)
    )
    lo, hi = math.log1p(x), math.log1p(N2)
    cuts = sorted({lo, hi, *(k * math.log(2.0) for k in knots if lo < k * math.log(2.0) < hi)})

    def h2(w):
        return math.exp(float(np.interp(w / math.log(2.0), knots, values)))

    ref = sum(quad(h2, a, b, epsabs=0.0, epsrel=1e-13)[0] for a, b in zip(cuts, cuts[1:]))
    assert anytime_mod.knot_integral(x, knots, values) == pytest.approx(ref, rel=1e-11, abs=0.0)


# kills transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_27 (profiles 1 and 2 read
# at a table of 2^bit_length(steps - 2): at steps = 2^j + 1 a table of 2^j, and a path one step short)
@pytest.mark.parametrize("profile", [1, 2, 3, 4])
@pytest.mark.parametrize("steps", [1, 2, 256, 257, 513])
def test_the_variance_path_has_one_variance_a_step_and_is_the_tables_rows(profile, steps):
    """``anytime_variance_path(steps)`` is the per-step variance for t = 1..steps: ``steps`` values, each the
    squared decoder row of its step times sigma^2 g^2 (profiles 1 and 2: the tables' ``bsq``)."""
    path = anytime_variance_path(steps, 1.0, profile)
    assert path.shape == (steps,) and np.all(path > 0)
    if profile < 3:
        tab = anytime_tables(1024, profile)
        sigma2_g2 = path[0] / float(tab.bsq[0])
        assert np.allclose(path, sigma2_g2 * np.asarray(tab.bsq[:steps]), rtol=1e-12)


# kills transforms.core.counters.factorization.anytime.xǁPhaseTablesǁ__init____mutmut_28 (phase 1's squared column
# norm summed as sum P_k / P_k = t1: the 2^40 check then checks the count of coefficients, not their norm)
def test_phase_tables_state_and_check_the_first_phases_exact_squared_column_norm():
    """``PhaseTables``: ``column_sq = sum_k P_k^2`` exactly (the merged item's column in phase 2 lacks exactly
    K_0^2 = 2^40 and phase 1 must fit in it), at most 2^40, and ``s1 = sum_k P_k``."""
    tab = PhaseTables(MERGE_T1)
    cint = [int(v) for v in tab.cint]
    assert len(cint) == MERGE_T1
    assert tab.column_sq == sum(v * v for v in cint) <= 1 << (2 * LATTICE_BITS)
    assert tab.column_sq > (1 << (2 * LATTICE_BITS)) * 0.99  # scaled to the full norm (floors lose little)
    assert tab.s1 == sum(cint)


# ---------------------------------------------------------------------------------------------------------------------
# contribution/toeplitz.py and sensitivity.py
# ---------------------------------------------------------------------------------------------------------------------


# kills transforms.core.contribution.toeplitz.x__anytime_model__mutmut_2, _5, _8, _9, _10, _14, _17, _25, _26 (the
# model's coefficients as floats, only 3 of them, writable; its s1 None; its name None, upper case or XX-wrapped)
def test_the_anytime_model_is_the_counters_column_with_its_documented_attributes():
    """``toeplitz_model("anytime_sqrt")``: name ``anytime_sqrt``, unbounded, kappa the first ``ANYTIME_PREFIX``
    coefficients of the counter's infinite column (int64, read-only: the model is shared, cached), what the
    counter's own tables hold; ``s1`` their sum (exact int); ``n2`` the counter's calibration bound; not attained."""
    toeplitz_mod._anytime_model.cache_clear()
    model = toeplitz_model("anytime_sqrt")
    n = toeplitz_mod.ANYTIME_PREFIX
    assert model.name == "anytime_sqrt" and model.horizon is None and model.attained is False
    assert model.kappa.dtype == np.int64 and not model.kappa.flags.writeable
    assert len(model.kappa) == n == model.window
    assert np.array_equal(model.kappa, anytime_coefficients(n))
    assert np.array_equal(model.kappa, anytime_tables(n).cint[:n])
    assert type(model.s1) is int and model.s1 == sum(int(v) for v in model.kappa)
    assert model.n2 == anytime_sensitivity_sq()


# kills transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_285, _286 (the example pattern
# cut at the horizon for blt and anytime_sqrt, whose horizon cuts no change: blt's exact bound then comes with a
# witness that lacks its deletion)
@pytest.mark.parametrize("horizon", [None, 64, 5000])
def test_blts_exact_bound_comes_with_a_witness_that_reaches_it(horizon):
    """An exact sensitivity's ``pattern`` attains the bound: for ``blt`` (unbounded: no change is cut by a design
    horizon) one count entry's insertion and deletion ``W`` apart move the release by ``||K (e_0 - e_W)||^2 = 2 n2``
    = ``multiplier^2 n2``, the pattern holding both changes whatever the horizon."""
    s = contribution_sensitivity(COUNT, "blt", "gaussian", ContributionUnit.entry(3, 1), horizon=horizon)
    model = toeplitz_model("blt", horizon)
    assert s.exact and [op for _, op, _ in s.pattern] == ["insert", "delete"]
    (p0, _, _), (p1, _, _) = s.pattern
    kappa = [int(v) for v in model.kappa]
    y = [0] * (p1 + len(kappa))
    for i, v in enumerate(kappa):
        y[p0 + i] += v
        y[p1 + i] -= v
    assert sum(v * v for v in y) == 2 * model.n2
    assert s.multiplier**2 * model.n2 == pytest.approx(sum(v * v for v in y), rel=1e-12)


# kills transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_272, _277, _278, _281 (the account
# naming "1 level" for every tree, "LEVELS" or "XXlevelsXX", or a horizon and levels for counters that have none)
def test_the_laplace_account_names_the_trees_levels_and_nothing_for_other_counters():
    """``Sensitivity.method`` (the line plans and manifests show) names the k-ary tree as
    ``kary_tree(T=horizon, L levels)`` (``1 level`` for a single level) and the other interval counters by name."""
    unit = ContributionUnit.entry(2, 1)
    seen = set()
    for horizon, radices in ((1000, None), (16, (2, 2, 2, 2)), (1, ())):
        s = contribution_sensitivity(COUNT, "kary_tree", "laplace", unit, horizon=horizon, radices=radices)
        levels = round(s.update_level)  # a count's l1 is 1: the update level is the number of levels
        word = "level" if levels == 1 else "levels"
        assert f"through kary_tree(T={horizon}, {levels} {word}) <=" in s.method
        seen.add(levels)
    assert 1 in seen and len(seen) == 3  # one level, and several
    s = contribution_sensitivity(COUNT, "infinite", "laplace", unit)
    assert "through infinite <=" in s.method


# kills transforms.core.continual.auto.x_auto_counter__mutmut_10, _11 (a bounded update-level Gaussian run of horizon 2
# given sqrt_factorization instead of scaled_sqrt)
def test_auto_picks_scaled_sqrt_for_every_bounded_update_level_gaussian_run():
    """``auto_counter``: a bounded run at update level under Gaussian noise gets ``scaled_sqrt`` from horizon 2 on
    (a horizon of 1 is a single release: ``net_change``'s choice); without an end ``anytime_sqrt``."""
    for horizon in (2, 3, 4, 100, 1 << 12):
        assert auto_counter("gaussian", horizon, "update") == "scaled_sqrt", horizon
    assert auto_counter("gaussian", None, "update") == "anytime_sqrt"


# kills transforms.core.foundation.samplers.x__search__mutmut_34, _48, _52 (the gallop's first step up 2, its steps
# tripled instead of doubled, or its first step down 2: the same X, but other points probed past the walk, so other
# words read where U's first interval spans several of q's steps: the draws after it move, and a key's releases are
# reproducible)
@pytest.mark.parametrize("direction", [1, -1])
def test_past_the_walk_the_search_gallops_with_doubling_steps_then_bisects(direction):
    """The docstring's algorithm past ``WALK_BEFORE_GALLOP`` single steps: steps that double (1, 2, 4, ...) from
    where the walk ended until X is bracketed, then bisection of the bracket. Up (X far above the start) and down."""
    walk = samplers.WALK_BEFORE_GALLOP
    x = 10_000
    start = x - direction * 5000
    le = Comparator(x, limit=_cost(start, x))
    assert samplers._search(le, start) == (True, x)
    end = start + direction * walk  # where the walk stops
    assert le.probes[2 * walk] == end  # the check between the walk and the gallop
    gaps, k = [], end
    for p in le.probes[2 * walk + 1 :]:
        gaps.append((p - k) * direction)
        if (p - x) * direction > 0:  # past X: bracketed
            break
        k = p
    assert gaps == [1 << j for j in range(len(gaps))]
    below, above = sorted((k, k + direction * gaps[-1]))  # the bracket: U <= q^below, U > q^above
    for p in le.probes[2 * walk + 1 + len(gaps) :]:  # bisection: each probe the middle of what is left
        assert p == (below + above) // 2
        below, above = (p, above) if p <= x else (below, p)
    assert (below, above) == (x, x + 1)


# kills transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_43, _45 (the figure to beat taken at
# the table's row for the horizon instead of at ``start``: a start that is not the table's row is then returned with
# the table row's figure, or the polish's result refused against the wrong figure)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the astray points are no counter: figures of NaN
def test_polish_scaled_returns_its_start_with_the_starts_own_figure(monkeypatch):
    """``polish_scaled`` returns ``(coefficients, their lattice max variance)`` and ``start`` itself when nothing it
    found is lower: with every scipy stage going astray (as ``test_counters_scaled.py``'s test) and a start off the
    table's row, the start comes back with its own figure, not the table row's."""
    import scipy.optimize

    from transforms.core.counters.factorization import scaled as scaled_mod

    class Astray:
        def __init__(self, x0):
            self.x = np.asarray(x0, dtype=np.float64) + 0.5
            self.fun = float("inf")

    monkeypatch.setattr(scipy.optimize, "minimize", lambda f, x0, **k: Astray(x0))
    start = tuple(v + 0.02 for v in scaled_mod.SCALED_TABLE[3])
    figure = scaled_mod.lattice_max_variance(8, start)
    assert figure != scaled_mod.lattice_max_variance(8)  # off the row: another figure
    coef, best = scaled_mod.polish_scaled(3, start, evaluations=0)
    assert coef == tuple(map(float, start)) and best == figure


# ---------------------------------------------------------------------------------------------------------------------
# foundation/state.py, state_chunks.py, selection/release.py: stored forms
# ---------------------------------------------------------------------------------------------------------------------


# kills transforms.core.selection.release.x_key_state_to_plain__mutmut_13, _14 (the schema stored under another key:
# a selected key's counter written under a later schema is then read as schema 2 and migrated again) and
# transforms.core.selection.release.x_key_state_from_plain__mutmut_21, _22, _25 (the schema read from another key, so
# always 2, or a state without "schema", written before stop 50, refused instead of read as 2)
def test_a_selected_keys_counter_is_migrated_from_the_schema_it_was_written_in(monkeypatch):
    """``key_state_to_plain`` stores the state format's schema beside the counter (which lives outside any
    envelope); ``key_state_from_plain`` migrates from it. Under a later schema 3 (a migration 2 -> 3 that must run
    on schema 2 data only), a key written at 3 reads back without a migration, one written at 2 with it, and one
    without the field (written before stop 50) is of schema 2."""
    from transforms.core.counters import make_counter
    from transforms.core.foundation import state as state_mod
    from transforms.core.foundation.accounting import ZCDP
    from transforms.core.foundation.noise import NoiseSource
    from transforms.core.selection import key_state_from_plain, key_state_to_plain
    from transforms.core.selection.release import SelectedKey
    from transforms.core.static.linear import CountMechanism

    counter = make_counter("sqrt_factorization", CountMechanism(noise="gaussian"), ZCDP(0.5), horizon=4)
    counter.step([1], NoiseSource.disabled())
    ran = []
    monkeypatch.setattr(state_mod, "SCHEMA", 3)
    monkeypatch.setitem(state_mod.MIGRATIONS, 2, lambda s: (ran.append(1), {**s, "schema": 3})[1])
    plain = key_state_to_plain(SelectedKey(1, 2, counter, 5))
    back = key_state_from_plain(plain)
    assert ran == [] and back.counter.t == counter.t == 1 and (back.period, back.entries, back.answer) == (1, 2, 5)
    assert plain.get("schema") == 3
    key_state_from_plain({**plain, "schema": 2})
    assert ran == [1]
    old = {k: v for k, v in plain.items() if k != "schema"}  # written before stop 50: schema 2
    assert key_state_from_plain(old).counter.t == 1 and ran == [1, 1]


# kills transforms.core.foundation.state.x__to_plain__mutmut_50 (an escaped dict's values walked without the memo:
# an object it holds that is also held elsewhere is not stored as a reference)
def test_an_object_under_a_tag_like_key_stays_shared_through_a_round_trip():
    """A dict whose data keys look like tags (an entry id ``"$r"``) is stored escaped; the objects its values hold
    are walked with the same memo as the rest, so an object held both there and elsewhere is restored once, shared
    (the module docstring: shared objects stay shared)."""
    from transforms.core.foundation.accounting import Ledger, PureDP
    from transforms.core.foundation.state import decode, encode, from_plain, to_plain

    ledger = Ledger(PureDP(1.0))
    data = {"by_id": {"$r": ledger, "e1": 3}, "ledger": ledger}
    back = from_plain(decode(encode(to_plain(data))))
    assert set(back["by_id"]) == {"$r", "e1"} and back["by_id"]["e1"] == 3
    assert isinstance(back["ledger"], Ledger) and back["by_id"]["$r"] is back["ledger"]


# kills transforms.core.foundation.state_chunks.xǁChunkStoreǁ_write__mutmut_30 (the live state's size taken with
# DIGEST_BYTES / chunks instead of x chunks: the bag written afresh before it holds 2 x live + floor)
def test_the_bag_is_written_afresh_exactly_when_it_would_exceed_twice_the_live_state():
    """``ChunkStore``: chunks no longer referenced stay in the bag until its bytes (each entry a digest and a chunk)
    would exceed ``2 x live + floor``, ``live`` the state's large arrays as stored: their bytes and a digest a chunk.
    An array of 4 chunks of 64 bytes rewritten whole at every write (floor 0): live = 256 + 4 x 16 = 320, each write
    adds 4 x 80 = 320 bytes, so the third write is the first to clear (960 > 640), then every other one."""
    from transforms.core.foundation.state import to_plain
    from transforms.core.foundation.state_chunks import DIGEST_BYTES, ChunkStore

    store = ChunkStore(chunk_bytes=64, floor=0)
    clears = []
    for i in range(7):
        arr = np.arange(32, dtype=np.int64) + 1000 * (i + 1)  # 256 bytes, every chunk new
        w = store.write(lambda a=arr: to_plain({"a": a}))
        clears.append(w.clear)
        live = 256 + DIGEST_BYTES * 4
        assert store.bag_bytes <= 2 * live + 4 * (64 + DIGEST_BYTES)
    assert clears == [False, False, True, False, True, False, True]
