"""L2 sensitivity of a lattice Toeplitz counter (``sqrt_factorization``, ``blt``; ``anytime_sqrt``
through the unbounded bounds, which need Lemma A1's premises only) to what one entry can do to the
signed change stream (proofs: ``docs/contribution.md``, "Gaussian").

The counter releases ``y = K d + z``: ``K`` the integer lower-triangular Toeplitz matrix of the
snapped coefficients ``kappa_0 = 2^20 >= kappa_1 >= ... > 0`` (``T x T`` over a horizon of ``T``
periods; infinite, with finite support ``W``, for the BLT), ``d`` the per-period signed change,
``z`` discrete Gaussian noise calibrated to ``n2 = ||K e_0||^2`` (times the query set's largest
squared column norm). One entry's change ``Delta = D w`` is the first difference of its *state
path* ``w`` (its item's answer vector while alive, 0 while dead; changes inside one period
telescope). Everything here is about ``||K D w||^2`` in exact integer lattice units.

Notation (positions are periods, 0-based, ``T`` standing for "after the horizon"):

* ``S(n) = sum_{j<n} kappa_j^2``: the squared norm of the column at position ``T - n``;
* ``F(n, delta) = ||K (e_a - e_b)||^2`` with ``n = T - b``, ``delta = b - a``
  ``= S(delta) + sum_{j<n} (kappa_j - kappa_{j+delta})^2``: non-decreasing in ``n`` and in
  ``delta`` (Lemma M);
* ``chain(c, open)``: the maximum over ``0 = s_0 <= s_1 <= ... <= s_c <= T`` of
  ``sum_i F(T - s_i, s_i - s_{i-1}) + open * S(T - s_c)``: an entry visiting ``c + open``
  distinct histogram cells one after the other (closed visits, then one open visit).

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from transforms.core.counters.factorization import (
    BLT_TABLE,
    LATTICE_BITS,
    blt_coefficients,
    blt_omega,
    snap_coefficients,
    sqrt_coefficients,
)
from transforms.core.counters.factorization.anytime import PROFILE, anytime_coefficients, anytime_sensitivity_sq
from transforms.core.counters.factorization.lattice import DEFAULT_BLT_HORIZON, DEFAULT_BLT_WINDOW

__all__ = [
    "ToeplitzModel",
    "ChainBound",
    "toeplitz_model",
    "chain_bound",
    "alternating_bound",
    "histogram_bound",
    "layer_cake_bound",
    "CROSS_SLACK_FACTOR",
    "DEFAULT_RTOL",
]

DEFAULT_RTOL = 1e-3  # certified relative gap of the search (the bound is never below the truth)
MAX_ROUNDS = 64  # refinement rounds of chain_bound; past them the bound stays valid, only looser
INITIAL_INTERVALS = 16  # per step, before the refinement
MAX_WORK = 2_000_000_000  # coefficient products of the search; past them it stops with a valid, looser bound
TRANSITION_WORK = 1000  # one step of the programme, counted as that many products (its Python cost)
CROSS_SLACK_FACTOR = 8  # Lemma P: 2 <u, v> <= 2 * 4 * s1 for two disjoint closed visits of one coordinate


@dataclass(frozen=True, eq=False)
class ToeplitzModel:
    """The integer Toeplitz matrix of one lattice counter, as the sensitivity proofs read it.

    Attributes:
      name: ``sqrt_factorization``, ``blt`` or ``anytime_sqrt``.
      horizon: ``T`` periods (finite ``K``), or None: unbounded (the BLT, translation invariant;
        ``anytime_sqrt``, Toeplitz after its first phase). Unbounded models are read through Lemma A1
        only (``||K D u||^2 <= r n2`` for a 0/1 path with ``r`` changes), whose premises are: every
        entry of the encoder non-negative, non-decreasing along each row (the older column has the
        smaller entry), every column of squared norm at most ``n2``.
      kappa: the lattice coefficients (int64). Finite: extended to ``2 T + 1`` terms (their
        natural continuation; only the first ``T`` are the counter's, the rest serve the monotone
        upper bounds of the branch and bound). The BLT: the whole support ``W``. ``anytime_sqrt``:
        the first ``2^12`` of its infinite column after the first phase (what ``window`` spaces
        example patterns by; no bound reads them).
      n2: ``||K e_0||^2`` (exact int): what the counter calibrates its noise to, per unit of the
        query set's squared column norm (``anytime_sqrt``: its bound on every infinite column).
      s1: ``sum_{j<T} kappa_j`` (exact int), the column L1 norm (the slack of Lemma P; finite
        horizons only: ``anytime_sqrt``'s is the sum of the stored prefix).
      attained: the unbounded bounds are reached by a finite pattern (the BLT: changes ``W``
        apart, no row shared); False for ``anytime_sqrt``, whose columns reach ``n2`` only in the
        limit: its bounds are suprema, approached as the changes move apart, never reached.
    """

    name: str
    horizon: int | None
    kappa: np.ndarray
    n2: int
    s1: int
    attained: bool = True

    @property
    def window(self) -> int:
        return len(self.kappa)


def _check_kappa(kappa: np.ndarray) -> None:
    """Every lemma needs positive, non-increasing coefficients (the counters assert it too)."""
    if kappa[0] != 1 << LATTICE_BITS or np.any(kappa <= 0) or np.any(np.diff(kappa) > 0):
        raise AssertionError("the lattice coefficients must be positive and non-increasing from 2^20")


ANYTIME_PREFIX = 1 << 12  # the coefficients an anytime_sqrt model keeps (example patterns only)


@functools.lru_cache(maxsize=16)
def toeplitz_model(name: str, horizon: int | None = None) -> ToeplitzModel:
    """The model of counter ``name`` (``sqrt_factorization`` over ``horizon`` periods; ``blt``
    with design horizon ``horizon``, default ``DEFAULT_BLT_HORIZON``, and the default window;
    ``anytime_sqrt``, the same counter whatever the horizon), rebuilt from the public coefficient
    functions exactly as the counters build theirs (``tests/test_contribution_sensitivity.py`` and
    ``tests/test_contribution_anytime.py`` check the noise the counters calibrate and what they
    encode)."""
    if name == "anytime_sqrt":
        return _anytime_model()
    if name == "sqrt_factorization":
        if not horizon or int(horizon) < 1:
            raise ValueError("sqrt_factorization needs a horizon >= 1")
        t = int(horizon)
        kappa = snap_coefficients(sqrt_coefficients(2 * t + 1)).astype(np.int64)
        if len(kappa) < 2 * t + 1:  # never for horizons the counter accepts: no coefficient snaps to 0
            raise ValueError("the square-root coefficients vanish on the lattice before 2T")
        _check_kappa(kappa)
        n2 = int(sum(int(v) * int(v) for v in kappa[:t]))
        s1 = int(sum(int(v) for v in kappa[:t]))
        kappa.setflags(write=False)
        return ToeplitzModel(name, t, kappa, n2, s1)
    if name == "blt":
        n = int(horizon) if horizon else DEFAULT_BLT_HORIZON
        log2n = max(3, (n - 1).bit_length())
        if log2n not in BLT_TABLE:
            raise ValueError(f"no BLT parameters for design horizon 2^{log2n}")
        theta, theta_hat = BLT_TABLE[log2n]
        c = blt_coefficients(theta, blt_omega(theta, theta_hat), DEFAULT_BLT_WINDOW * (1 << log2n))
        kappa = snap_coefficients(c).astype(np.int64)
        _check_kappa(kappa)
        kappa.setflags(write=False)
        n2 = int(sum(int(v) * int(v) for v in kappa))
        s1 = int(sum(int(v) for v in kappa))
        return ToeplitzModel(name, None, kappa, n2, s1)
    raise ValueError(f"no Toeplitz model for counter {name!r}")


@functools.lru_cache(maxsize=1)
def _anytime_model() -> ToeplitzModel:
    """``anytime_sqrt`` (the profile of new counters) as an unbounded model. Lemma A1's premises
    (``ToeplitzModel``), from its construction (``counters/factorization/anytime.py``): its first
    ``MERGE_T1`` rows are phase 1's Toeplitz rows ``P_{t-a}`` (positive, non-increasing in the lag:
    non-decreasing along the row); every later row ``t`` gives each first-phase column the merged
    item's entry ``K_{t-MERGE_T1+1}`` and each later column ``a`` the entry ``K_{t-a}`` with
    ``t - a <= t - MERGE_T1 < t - MERGE_T1 + 1``, so, ``K`` non-increasing, it too is non-decreasing
    along the row; a first-phase column has squared norm ``sum P_k^2 + sum_{k>=1} K_k^2 <= K_0^2 + sum_{k>=1}
    K_k^2``, a later one ``sum_k K_k^2``, both at most ``n2`` (``anytime_sensitivity_sq``, with its
    tail bound; ``PhaseTables`` asserts phase 1's column). Checked on the counter's own encoder by
    ``tests/test_contribution_anytime.py``."""
    kappa = anytime_coefficients(ANYTIME_PREFIX, PROFILE).astype(np.int64)
    _check_kappa(kappa)
    kappa.setflags(write=False)
    s1 = int(sum(int(v) for v in kappa))
    return ToeplitzModel("anytime_sqrt", None, kappa, anytime_sensitivity_sq(PROFILE), s1, attained=False)


@dataclass(frozen=True)
class ChainBound:
    """A certified maximum: ``lower <= truth <= upper`` (exact ints, lattice units^2), with
    ``upper <= lower (1 + rtol)`` once the search has converged (``exact``).

    ``positions``: the period positions (0-based) of a pattern whose value is ``lower``: the
    changes at ``0 = s_0, s_1, ..., s_c`` (``T`` or more: never)."""

    upper: int
    lower: int
    positions: tuple[int, ...]
    exact: bool  # tight: upper <= lower (1 + rtol) (the search converged)


class _Evaluator:
    """``S(n)`` and ``F(n, delta)`` of a finite model, exact, with a cache."""

    def __init__(self, model: ToeplitzModel):
        self.k = model.kappa
        self.t = int(model.horizon)
        self.s = np.concatenate([[0], np.cumsum(self.k * self.k)])  # S(n) = s[n]; < 2^44: no overflow
        self.cache: dict[tuple[int, int], int] = {}
        self.work = 0  # coefficient products so far

    def S(self, n: int) -> int:
        return int(self.s[max(n, 0)])

    def F(self, n: int, delta: int) -> int:
        key = (n, delta)
        v = self.cache.get(key)
        if v is None:
            if n <= 0 or delta <= 0:
                v = self.S(delta) if delta > 0 else 0
            else:
                x = self.k[:n] - self.k[delta : delta + n]
                v = int(self.s[delta]) + int(np.dot(x, x))
                self.work += n
            self.cache[key] = v
        return v

    def value(self, pts, open_: bool) -> int:
        tot, prev = 0, 0
        for s in pts:
            tot += self.F(self.t - s, s - prev)
            prev = s
        if open_:
            tot += self.S(self.t - prev)
        return tot


def _point(path) -> list[int]:
    """A real pattern near the centres of a sequence of intervals (ordered positions)."""
    pts, prev = [], 0
    for lo, hi in path:
        s = max((lo + hi) // 2, prev)
        pts.append(s)
        prev = s
    return pts


def _split(iv, parts: int = 2) -> list[tuple[int, int]]:
    lo, hi = iv
    if hi == lo:
        return [iv]
    n = min(parts, hi - lo + 1)
    cuts = [lo + (hi - lo + 1) * j // n for j in range(n + 1)]
    return [(cuts[j], cuts[j + 1] - 1) for j in range(n)]


@functools.lru_cache(maxsize=256)
def chain_bound(model: ToeplitzModel, closed: int, open_: bool, rtol: float = DEFAULT_RTOL) -> ChainBound:
    """``chain(closed, open)`` (module docstring), certified to ``upper <= lower (1 + rtol)``.

    Finite horizon: a layered interval dynamic programme. Each step ``i`` keeps a set of
    position intervals; a move from interval ``J`` (step ``i - 1``) to ``I`` (step ``i``) is
    worth at most ``F(T - lo_I, hi_I - lo_J)`` (Lemma M), so the programme's value bounds every
    chain whose positions lie in the intervals; intervals whose best chain is bounded below the
    best real pattern found are dropped, the others are halved, until the bound is within
    ``rtol`` of a real pattern (or every interval is a point: exact). Past ``MAX_WORK`` the
    search stops with its bound, for two or more closed visits the smaller of it and ``closed * chain(1, 0) +
    open * n2`` (every closed visit is a pair, Lemma M): valid, looser. Integer arithmetic throughout.
    Unbounded: ``(2 closed + open) n2`` (Lemma A1), for the BLT (translation invariant, support
    ``W``) exactly, at the positions ``0, W, 2W, ...`` (no two changes share a row); for
    ``anytime_sqrt`` a supremum (``lower`` 0: no finite pattern reaches it)."""
    closed = int(closed)
    if closed < 0:
        raise ValueError("closed must be >= 0")
    if model.horizon is None:
        v = (2 * closed + int(open_)) * model.n2
        lower = v if model.attained else 0  # anytime_sqrt: a supremum, no finite pattern reaches it
        return ChainBound(v, lower, tuple(i * model.window for i in range(closed + 1)), model.attained)
    ev = _Evaluator(model)
    t = ev.t
    if closed == 0:
        v = ev.S(t) if open_ else 0
        return ChainBound(v, v, (0,), True)
    layers = [_split((0, t), INITIAL_INTERVALS) for _ in range(closed)]
    best, best_pts = -1, None
    dropped = 0  # the largest bound of a chain through a dropped interval (a real pattern may reach it)
    rounds = 0
    while True:
        rounds += 1
        # forward: fwd[i][I] = the best (upper) value of steps 1..i ending in interval I
        fwd: list[list[int | None]] = []
        arg: list[list[int | None]] = []
        for i, layer in enumerate(layers):
            row, rarg = [], []
            for lo, hi in layer:
                if i == 0:
                    row.append(ev.F(t - lo, hi))
                    rarg.append(None)
                    continue
                bv, bj = None, None
                ev.work += TRANSITION_WORK * len(layers[i - 1])
                for j, (plo, _) in enumerate(layers[i - 1]):
                    pv = fwd[i - 1][j]
                    if pv is None or hi < plo:
                        continue
                    v = pv + ev.F(t - lo, hi - plo)
                    if bv is None or v > bv:
                        bv, bj = v, j
                row.append(bv)
                rarg.append(bj)
            fwd.append(row)
            arg.append(rarg)
        # backward: bwd[i][I] = the best (upper) value of the steps after i, starting in I
        bwd: list[list[int | None]] = [[] for _ in layers]
        bwd[-1] = [ev.S(t - lo) if open_ else 0 for lo, _ in layers[-1]]
        for i in range(closed - 2, -1, -1):
            row = []
            for lo, _ in layers[i]:
                bv = None
                for j, (nlo, nhi) in enumerate(layers[i + 1]):
                    nb = bwd[i + 1][j]
                    if nb is None or nhi < lo:
                        continue
                    v = ev.F(t - nlo, nhi - lo) + nb
                    if bv is None or v > bv:
                        bv = v
                row.append(bv)
            bwd[i] = row
        ends = [(f + b, j) for j, (f, b) in enumerate(zip(fwd[-1], bwd[-1])) if f is not None]
        upper, j = max(ends)
        path = [layers[-1][j]]
        for i in range(closed - 1, 0, -1):
            j = arg[i][j]
            path.append(layers[i - 1][j])
        pts = _point(path[::-1])
        v = ev.value(pts, open_)
        if v > best:
            best, best_pts = v, pts
        points = all(lo == hi for layer in layers for lo, hi in layer)
        if upper <= best * (1 + rtol) or points or rounds > MAX_ROUNDS or ev.work > MAX_WORK:
            upper = max(upper, best, dropped)
            if upper > best * (1 + rtol) and closed > 1:  # stopped early: each closed visit is a pair (Lemma M)
                # (one closed visit keeps its own bound: the pair's search is this one, stopped the same way)
                upper = min(upper, closed * chain_bound(model, 1, False, rtol).upper + (ev.S(t) if open_ else 0))
            return ChainBound(upper, best, (0, *best_pts), upper <= best * (1 + rtol))
        cut = best  # an interval whose chains cannot beat a real pattern goes
        for i in range(closed):
            for f, b in zip(fwd[i], bwd[i]):
                if f is not None and b is not None and f + b <= cut:
                    dropped = max(dropped, f + b)
        layers = [
            [
                part
                for (iv, f, b) in zip(layer, fwd[i], bwd[i])
                if f is not None and b is not None and f + b > cut
                for part in _split(iv)
            ]
            for i, layer in enumerate(layers)
        ]


def _slack(model: ToeplitzModel, closed_pairs: int) -> int:
    """Lemma P's allowance for ``closed_pairs`` pairs of disjoint closed visits of one coordinate."""
    if model.horizon is None or closed_pairs <= 0:
        return 0
    return CROSS_SLACK_FACTOR * closed_pairs * model.s1


def alternating_bound(model: ToeplitzModel, toggles: int, rtol: float = DEFAULT_RTOL) -> tuple[int, bool, tuple]:
    """``N_r^2``: the largest ``||K D u||^2`` over 0/1 paths ``u`` (one coordinate, from 0) with at
    most ``r = toggles`` changes. Returns ``(upper bound, exact, positions)``.

    r <= 2: exact (Lemma M: the insertion at position 0). r = 3: Lemma A (alternating rows)
    gives ``<= chain(1, open)``. r >= 4: Lemma P, ``chain(r // 2, r odd)`` plus its slack.
    Unbounded: ``r n2`` (Lemma A1: exact for the BLT, attained with the changes ``W`` apart; for
    ``anytime_sqrt`` a supremum, approached as the changes move apart)."""
    r = int(toggles)
    if r <= 0:
        return 0, True, ()
    best: tuple[int, bool, tuple] = (0, True, ())
    for q in range(1, r + 1):
        if model.horizon is None:
            cand = (q * model.n2, model.attained, tuple(i * model.window for i in range(q)))
        elif q == 1:
            cb = chain_bound(model, 0, True, rtol)
            cand = (cb.upper, True, (0,))
        else:
            cb = chain_bound(model, q // 2, bool(q % 2), rtol)
            exact = q == 2 and cb.exact
            cand = (cb.upper + _slack(model, math.comb(q // 2, 2)), exact, cb.positions)
        if cand[0] > best[0]:
            best = cand
    return best


def histogram_bound(
    model: ToeplitzModel, max_mutations: int, domain_size: int, toggles: int, rtol: float = DEFAULT_RTOL
) -> tuple[int, bool, tuple]:
    """The largest ``||K D W||_F^2`` of one entry of a histogram (one-hot items), ``k`` mutations.

    Its cells' paths are orthogonal coordinates; its visits (insert or upsert opens one, upsert
    or delete closes it) form a chain of at most ``k - 1`` closed visits and one open visit, so
    ``<= chain(k - 1, open)``, attained with ``k`` distinct cells (domain >= k). A revisited
    cell adds cross terms: none above 0 while no cell has more than 3 changes (k <= 3, Lemma A),
    else Lemma P's slack. A one-cell domain is a count (``toggles`` = its alive changes)."""
    k = int(max_mutations)
    if domain_size <= 1:
        return alternating_bound(model, toggles, rtol)
    if model.horizon is None:
        v = (2 * k - 1) * model.n2  # Lemma A per cell: every cell's path is alternating
        return v, model.attained, tuple(i * model.window for i in range(k))
    cb = chain_bound(model, k - 1, True, rtol)
    slack = _slack(model, math.comb(k - 1, 2)) if k >= 4 else 0
    exact = cb.exact and slack == 0 and domain_size >= k
    return cb.upper + slack, exact, cb.positions


def _sqrt_up(x: int) -> float:
    """The least float >= sqrt(x) (x a non-negative int)."""
    f = math.sqrt(x)
    while f * f < x or Fraction(f) * Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def layer_cake_bound(
    model: ToeplitzModel,
    columns: np.ndarray,
    max_mutations: int,
    alive_toggles: int,
    rtol: float = DEFAULT_RTOL,
) -> tuple[float, bool]:
    """An upper bound on ``||K D W||_F`` (not squared) for a linear query set whose items are the
    integer ``columns`` (m x d, lattice units), one entry with ``k`` mutations.

    Row by row (Lemma L, the layer cake): a row's path takes values in ``{0} u [lo, hi]``; its
    level sets above 0 and up to ``lo`` are the alive indicator (``alive_toggles`` changes),
    those above ``lo`` change at most ``k`` times, so ``||K D w_row|| <= lo N_alive + (hi - lo)
    N_k`` (rows of mixed sign: ``(max+ + max-) N_k``). Exact for a one-row sum with ``lo = 0``
    when ``N_k`` is."""
    cols = np.asarray(columns, dtype=np.int64)
    if cols.ndim != 2:
        raise ValueError("columns must be an m x d integer array")
    n_alive, ex_alive, _ = alternating_bound(model, alive_toggles, rtol)
    n_k, ex_k, _ = alternating_bound(model, max_mutations, rtol)
    ra, rk = _sqrt_up(n_alive), _sqrt_up(n_k)
    total, exact = 0.0, cols.shape[0] == 1
    for row in cols:
        lo, hi = int(row.min()), int(row.max())
        if lo >= 0:
            v = lo * ra + (hi - lo) * rk
            exact = exact and lo == 0 and ex_k
        elif hi <= 0:
            v = -hi * ra + (hi - lo) * rk
            exact = exact and hi == 0 and ex_k
        else:
            v = (hi - lo) * rk
            exact = False
        total += v * v
    return math.sqrt(total) * (1 + 1e-12), exact
