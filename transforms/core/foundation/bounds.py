"""Public error bounds for sums of independent discrete Laplace / Gaussian noises.

A :class:`NoiseProfile` describes the noise in one released answer as a linear
combination ``sum_i w_i X_i`` of independent noises whose laws are public
(``X_i`` discrete Laplace with scale ``b_i`` or discrete Gaussian with
parameter ``sigma2_i``), stored as counts of identical terms. It is what a
continual counter needs to report a valid ``(1 - beta)`` error bound
``gamma(t, beta)`` for an estimate that sums many releases (000, App. A.2).

:meth:`NoiseProfile.tail_bound` is a Chernoff bound: for every lambda in the
domain of the moment generating functions,

    P(|S| >= a) <= 2 exp(-lambda a + sum_i log M_i(lambda w_i)),

with the exact MGF of the discrete Laplace,
``M(l) = (1-q)^2 / ((1 - q e^l)(1 - q e^-l))``, ``q = exp(-1/b)``, and the
sub-Gaussian bound ``M(l) <= exp(l^2 sigma2 / 2)`` of the discrete Gaussian
(CKS 2020, Cor. 9). Any lambda gives a valid bound, provided the exponent is
evaluated accurately (the search over lambda only affects tightness): every
bound is its exact minimum over lambda to float rounding, by one minimiser,
the safeguarded Newton iteration of :func:`tail_bounds` (vectorised over many
profiles: the k-ary tree's bounds by blocks; :meth:`NoiseProfile.tail_bound`
is one row), with the log-MGF in a form accurate on lattice profiles too
(``tests/test_bound_newton.py``, ``docs/performance.md``). A single discrete
Laplace term uses its exact tail instead.
"""

from __future__ import annotations

import functools
import math
import struct
import threading
from collections.abc import Iterable

import numpy as np

from transforms.core.foundation.state import state_class

__all__ = ["NoiseProfile", "LAPLACE", "GAUSSIAN", "tail_bounds"]

LAPLACE = "laplace"
GAUSSIAN = "gaussian"

Key = tuple[str, float, float]  # (kind, parameter, weight)


@state_class("noise_profile", ("terms",))
class NoiseProfile:
    """Law of the noise of one answer: independent terms ``weight * X(kind, param)``.

    ``param`` is the discrete Laplace scale or the discrete Gaussian sigma^2,
    in the answer's units (a lattice release multiplies by its granularity
    through the weight).
    """

    __slots__ = ("terms",)

    def __init__(self, terms: dict[Key, int] | None = None):
        self.terms: dict[Key, int] = {}
        for k, c in (terms or {}).items():
            if c:
                self.terms[k] = self.terms.get(k, 0) + int(c)

    @classmethod
    def single(cls, kind: str, param: float, weight: float = 1.0) -> NoiseProfile:
        if kind not in (LAPLACE, GAUSSIAN):
            raise ValueError(f"unknown noise kind {kind!r}")
        return cls({(kind, float(param), float(weight)): 1})

    @classmethod
    def zero(cls) -> NoiseProfile:
        return cls()

    def __add__(self, other: NoiseProfile) -> NoiseProfile:
        out = NoiseProfile(self.terms)
        for k, c in other.terms.items():
            out.terms[k] = out.terms.get(k, 0) + c
        return out

    def times(self, count: int) -> NoiseProfile:
        """Sum of ``count`` independent copies."""
        return NoiseProfile({k: c * count for k, c in self.terms.items()})

    def scaled(self, w: float) -> NoiseProfile:
        out = NoiseProfile()
        for (kind, p, wt), c in self.terms.items():
            key = (kind, p, wt * w)
            out.terms[key] = out.terms.get(key, 0) + c
        return out

    @staticmethod
    def sum(profiles: Iterable[NoiseProfile]) -> NoiseProfile:
        out = NoiseProfile()
        for p in profiles:
            for k, c in p.terms.items():
                out.terms[k] = out.terms.get(k, 0) + c
        return out

    @property
    def is_zero(self) -> bool:
        return not self.terms

    def variance(self) -> float:
        """Exact variance (discrete Laplace) / upper bound sigma2 (discrete Gaussian)."""
        v = 0.0
        for (kind, p, w), c in self.terms.items():
            if kind == LAPLACE:
                q = math.exp(-1.0 / p)
                v += c * w * w * 2 * q / (1 - q) ** 2
            else:
                v += c * w * w * p
        return v

    def __eq__(self, other) -> bool:
        return isinstance(other, NoiseProfile) and self.terms == other.terms

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"NoiseProfile({len(self.terms)} kinds, {sum(self.terms.values())} terms)"

    def __getstate__(self):
        return self.terms

    def __setstate__(self, state):
        self.terms = state

    def tail_bound(self, beta: float) -> float:
        """A value ``a`` with ``P(|noise| > a) <= beta``."""
        if not 0 < beta < 1:
            raise ValueError(f"beta must be in (0, 1), got {beta}")
        if self.is_zero:
            return 0.0
        items = sorted(self.terms.items())
        key = _packed(items)
        if key is None:
            return _tail_bound(tuple(items), float(beta))
        return _tail_bound_packed(key, float(beta))


#: Interned term keys ``(kind, param, weight)`` (all floats): a cached profile is keyed by the ids of its terms
#: and their counts (``_packed``). The counters' profiles reuse few distinct terms (a tree's level weights, a
#: lattice's weight grid), so the table stays small; past ``_MAX_TERMS`` new terms take the uncompressed path.
_TERM_IDS: dict[Key, int] = {}
_TERMS: list[Key] = []
_MAX_TERMS = 1 << 16
_TERMS_LOCK = threading.Lock()
_MAX_COUNT = 1 << 53  # a count the key stores exactly


def _packed(items: list[tuple[Key, int]]) -> bytes | None:
    """A compact, exact cache key of a profile's sorted terms: (term id, count) pairs as unsigned 32 / 64-bit
    integers; None when a term is not ``(str, float, float)`` (an int or a numpy scalar would compute a result
    of another type) or the table is full."""
    flat = []
    for term, c in items:
        kind, p, w = term
        # the types first: an int 9 equals the float 9.0 (the same dict key) but computes a result of another type
        if type(kind) is not str or type(p) is not float or type(w) is not float:
            return None
        i = _TERM_IDS.get(term)
        if i is None:
            with _TERMS_LOCK:  # the SDK runs bundles in threads: one id per term
                i = _TERM_IDS.get(term)
                if i is None:
                    if len(_TERMS) >= _MAX_TERMS:
                        return None
                    i = _TERM_IDS[term] = len(_TERMS)
                    _TERMS.append(term)
        if type(c) is not int or not 0 < c < _MAX_COUNT:
            return None
        flat += (i, c)
    return struct.pack("<" + "IQ" * len(items), *flat)


@functools.lru_cache(maxsize=1 << 17)
def _tail_bound_packed(key: bytes, beta: float) -> float:
    """:func:`_tail_bound` keyed by ``_packed`` (the same terms in the same order: the same result, bit for
    bit). The cache holds 2^17 profiles (about 30 MB at most): every period of a stream is a new profile, and
    the streams of a release (the same counters, the same schedule) meet the same profiles period by period;
    a bounded run computes one stream after the other, so the cache must hold one stream's periods."""
    flat = struct.unpack("<" + "IQ" * (len(key) // 12), key)
    items = tuple((_TERMS[flat[j]], flat[j + 1]) for j in range(0, len(flat), 2))
    return _tail_bound.__wrapped__(items, beta)


@functools.lru_cache(maxsize=4096)
def _tail_bound(items: tuple[tuple[Key, int], ...], beta: float) -> float:
    if len(items) == 1:
        ((kind, p, w), c) = items[0]
        if kind == LAPLACE and c == 1:
            # exact: P(|X| >= k) = 2 q^k / (1 + q) for k >= 1, the least such k with it <= beta; log q is -1/p
            # exactly (math.log(q) of the rounded q loses ~7 digits at a lattice's scale ~1e7: k off by one)
            q = math.exp(-1.0 / p)
            k = math.ceil(p * math.log(2 / (beta * (1 + q))))
            return abs(w) * max(k - 1, 0)
    terms = [term for term, _ in items]
    lap = np.array([kind == LAPLACE and w != 0 for kind, _, w in terms], dtype=bool)
    if not lap.any():  # sub-Gaussian: closed form
        gvar = math.fsum(c * w * w * p for (kind, p, w), c in items if kind == GAUSSIAN)
        return math.sqrt(2 * gvar * math.log(2 / beta))
    counts = np.array([[c for _, c in items]], dtype=np.int64)
    return float(_newton_rows(terms, counts, lap, beta)[0])


def tail_bounds(terms: list[Key], counts: np.ndarray, beta: float) -> np.ndarray:
    """:meth:`NoiseProfile.tail_bound` of many profiles at once: row ``i`` is the profile
    ``{terms[k]: counts[i, k]}`` (non-negative integer counts; zeros are absent terms).

    The Chernoff bound of the module docstring, minimised over lambda by a safeguarded Newton iteration: the
    root of ``phi(l) = l G'(l) - G(l) - log(2 / beta)`` (``G`` the log-MGF of the sum; ``phi`` increases on
    ``(0, lam_max)`` since ``G`` is convex), bracketed in ``[min(lam_max e^-30, l_g / 4), lam_max (1 - 1e-9)]``
    (``l_g = sqrt(2 log(2 / beta) / variance)``, the Gaussian approximation's minimiser), a Newton step
    when it falls inside the bracket, else a geometric bisection. Every value returned is the Chernoff exponent
    evaluated at one lambda of the range (the least over the iterates), so it is a valid bound whatever the
    rounding, and it is within a few ulps of the exact minimum (``tests/test_bound_newton.py``, mpmath at 40
    digits; also on lattice profiles, where the golden section used before lost ~7 digits). It is the one
    minimiser: :meth:`NoiseProfile.tail_bound` computes its profile as one row. Vectorised with numpy, whose
    exp / log1p differ from ``math``'s in the last bits (not from each other with the array's length: a row's
    value does not depend on the other rows); rows stop iterating one by one when their Newton step is below
    1e-11 relative. A row of one discrete Laplace term (the exact tail) or without a Laplace term (the closed
    form) takes :meth:`NoiseProfile.tail_bound`'s path, the same bits; an all-zero row is 0."""
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta}")
    counts = np.asarray(counts, dtype=np.int64)
    n, k = counts.shape
    if k != len(terms):
        raise ValueError(f"counts has {k} columns for {len(terms)} terms")
    out = np.zeros(n)
    lap = np.array([kind == LAPLACE and w != 0 for kind, _, w in terms], dtype=bool)
    nz = counts != 0
    n_terms, n_lap = nz.sum(axis=1), (nz & lap).sum(axis=1)
    single = (n_terms == 1) & (n_lap == 1) & (counts.sum(axis=1) == 1)
    scalar = (n_terms > 0) & ((n_lap == 0) | single)
    for i in np.flatnonzero(scalar):  # the exact tail / the closed form: the scalar path's own values
        out[i] = NoiseProfile({terms[j]: int(counts[i, j]) for j in np.flatnonzero(nz[i])}).tail_bound(beta)
    rows = np.flatnonzero((n_lap > 0) & ~single)
    if rows.size:
        out[rows] = _newton_rows(terms, counts[rows], lap, float(beta))
    return out


def _newton_rows(terms: list[Key], counts: np.ndarray, lap: np.ndarray, beta: float) -> np.ndarray:
    """:func:`tail_bounds` of rows with at least one Laplace term (module docstring: the bound)."""
    gvar = np.zeros(len(counts))
    for j, (kind, p, w) in enumerate(terms):
        if kind == GAUSSIAN:  # sub-Gaussian terms: lambda^2 sigma2 / 2 each
            gvar += counts[:, j] * w * w * p
    cols = np.flatnonzero(lap)
    p = np.array([terms[j][1] for j in cols], dtype=float)
    c = counts[:, cols].astype(float)
    # per row: an absent term has weight 0 (then it is finite, and counted 0 times)
    w = np.where(c > 0, np.abs(np.array([terms[j][2] for j in cols], dtype=float)), 0.0)
    lq = -1.0 / p
    eq, om = np.exp(lq), -np.expm1(lq)  # q, 1 - q
    with np.errstate(divide="ignore"):
        lam_max = (1.0 / (p * w)).min(axis=1)
    log2b = math.log(2 / beta)
    # start at the lambda of the Gaussian approximation (the sum's variance), inside the bracket
    var = (c * w * w * 2 * eq / (om * om)).sum(axis=1) + gvar
    with np.errstate(divide="ignore"):
        x_gauss = np.sqrt(2 * log2b / var)
    # the bracket's lower end: lam_max e^-30, or lower where the sum's variance puts the minimum there (a
    # Gaussian term 1e13 times the Laplace scales and more: phi < 0 at any lambda below the root, so the
    # bracket holds it; bounded at lam_max e^-30 alone, such a row's bound was the exponent at the end, up to
    # 17x the minimum; round 44's mutant _newton_rows__mutmut_88 showed it)
    lo, hi = np.minimum(lam_max * math.exp(-30.0), x_gauss / 4), lam_max * (1 - 1e-9)
    x = np.clip(x_gauss, lo * 2, hi / 2)
    best = np.full(len(c), np.inf)
    active = np.arange(len(c))
    # the loop's operands in C order (``counts[:, cols]`` may be in Fortran order, and a row sum's rounding
    # follows the memory order): while every row iterates they are used as they are, else their rows are taken
    c, w = np.ascontiguousarray(c), np.ascontiguousarray(w)
    for _ in range(_MAX_NEWTON):
        if _IN_PLACE and active.size == len(c):  # the arrays themselves: their copies' values, without copying
            xa, ca, wa, ga, la, ha = x, c, w, gvar, lo, hi
        else:
            xa, ca, wa, ga, la, ha = x[active], c[active], w[active], gvar[active], lo[active], hi[active]
        lx = xa[:, None] * wa
        g = _log_mgf(lx, ca, eq, om) + xa * xa * ga / 2
        up, down = lq + lx, lq - lx
        ea, eb = np.exp(up), np.exp(down)
        oa, ob = -np.expm1(up), -np.expm1(down)
        cw = ca * wa
        g1 = (cw * (ea / oa - eb / ob)).sum(axis=1) + xa * ga
        g2 = (cw * wa * (ea / (oa * oa) + eb / (ob * ob))).sum(axis=1) + ga
        best[active] = np.minimum(best[active], (g + log2b) / xa)
        phi = xa * g1 - g - log2b  # h'(x) x^2 for h(x) = (G(x) + log(2 / beta)) / x: increasing
        below = phi < 0
        la = lo[active] = np.where(below, xa, la)
        ha = hi[active] = np.where(below, ha, xa)
        step = phi / (xa * g2)
        nxt = xa - step
        inside = (nxt > la) & (nxt < ha)
        nxt = np.where(inside, nxt, np.sqrt(la * ha))  # Newton inside the bracket, else geometric bisection
        done = (np.abs(step) <= 1e-11 * xa) | (ha - la <= 1e-15 * xa)
        x[active] = nxt  # after the last use of xa (x itself while every row iterates)
        if done.any():  # the bound at the converged point itself
            fin, xd = active[done], nxt[done]
            g = _log_mgf(xd[:, None] * w[fin], c[fin], eq, om) + xd * xd * gvar[fin] / 2
            best[fin] = np.minimum(best[fin], (g + log2b) / xd)
            active = active[~done]
            if not active.size:
                break
    return best


#: While every row iterates, the loop works on the arrays themselves instead of copies of their rows (~10% of a
#: bound; ``tests/test_bound_newton.py`` checks that False, copies at every iteration, gives the same bits).
_IN_PLACE = True
_MAX_NEWTON = 100  # Newton converges in ~10 steps from the Gaussian start; bisection alone would need ~60


def _log_mgf(lx: np.ndarray, c: np.ndarray, eq: np.ndarray, om: np.ndarray) -> np.ndarray:
    """Per row, sum_k c_k log M(lx_k) of discrete Laplace terms, ``M(l) = (1-q)^2 / ((1 - q e^l)(1 - q e^-l))``,
    as ``-log1p(-4 r (1 + r) sinh(l / 2)^2)`` with ``r = q / (1-q)``: ``(1 - q e^l)(1 - q e^-l) / (1-q)^2 =
    1 - 4 r (1 + r) sinh(l / 2)^2``, one term, a few ulps of the result at every l. Not
    ``2 log(1-q) - log(1 - q e^l) - log(1 - q e^-l)`` (~7 digits lost at a lattice's scale), nor
    ``-log1p(-r expm1(l)) - log1p(-r expm1(-l))`` (stop 56 and before: two terms of opposite signs whose sum is
    second order in l; at 10^12 copies of one term the bound was 1.6e-11 relative below the exact minimum)."""
    r = eq / om
    sh = np.sinh(lx / 2)
    return (c * -np.log1p(-4 * r * (1 + r) * (sh * sh))).sum(axis=1)
