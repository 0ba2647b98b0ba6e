"""Exact integer samplers (Canonne, Kamath, Steinke 2020): Bernoulli(exp(-x)),
discrete Laplace and discrete Gaussian from a :class:`RandomStream`, the
rounding of a float parameter up to an exact rational, and the reference
laws (pmfs, variances) the tests and bounds use (``docs/noise.md``).

The fast paths decide with floats only where the float answer is provably the
exact one; the few draws inside the band (:data:`EXACT_BAND`,
:data:`INVERSION_MARGIN`) are completed exactly (:func:`resolve_exactly`);
:func:`cks_bernoulli_exp_loop` and :func:`dlap_integer_ratio` are the
integer-only algorithms kept as references. Nothing here imports Apache Beam.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Union

import numpy as np

from transforms.core.foundation.random_stream import RandomStream, first_words

__all__ = [
    "as_ratio_up",
    "discrete_laplace",
    "discrete_laplace_rows",
    "discrete_gaussian",
    "bernoulli_exp",
    "bernoulli_exp_float",
    "resolve_exactly",
    "cks_bernoulli_exp_loop",
    "dlap_integer_ratio",
    "geometric_inversion",
    "lattice_granularity",
    "discrete_laplace_pmf",
    "discrete_gaussian_pmf",
    "discrete_laplace_variance",
    "discrete_gaussian_variance",
    "EXACT_BAND",
    "INVERSION_MARGIN",
]

Number = Union[int, float, Fraction]


# ----------------------------------------------------------------------------
# Exact Bernoulli and discrete samplers (Canonne-Kamath-Steinke 2020).
# ----------------------------------------------------------------------------


def as_ratio_up(x: Number, max_bits: int = 52) -> Fraction:
    if isinstance(x, float):
        return _as_ratio_up_float(x, max_bits)
    return _as_ratio_up(x, max_bits)


@functools.lru_cache(maxsize=1024)
def _as_ratio_up_float(x: float, max_bits: int) -> Fraction:
    return _as_ratio_up(x, max_bits)


def _as_ratio_up(x: Number, max_bits: int = 52) -> Fraction:
    """The smallest ``p / 2**k`` >= x with ``p < 2**max_bits`` (exact for Fractions
    whose terms fit). Used to turn a float scale into an exact rational one
    without ever decreasing it."""
    fx = x if isinstance(x, Fraction) else Fraction(x)
    if fx <= 0:  # before the Fraction fast path too: a small negative Fraction is refused, not returned
        raise ValueError(f"noise parameter must be positive, got {x}")
    if isinstance(x, Fraction) and x.denominator.bit_length() <= 62 and x.numerator.bit_length() <= 62:
        return x
    k = max(0, max_bits - 1 - max(0, math.ceil(math.log2(float(fx)) + 1)))
    p = math.ceil(fx * (1 << k))
    return Fraction(p, 1 << k)


EXACT_BAND = 2.0**-40  # half-width of the float band resolved exactly (see resolve_exactly)
_TWO63 = float(2**63)
_MAX_I63 = 2**63 - 4096  # largest float-exact int64 threshold we use


def bernoulli_exp(stream: RandomStream, num, den) -> np.ndarray:
    """Exact Bernoulli(exp(-num/den)) for arrays of integers ``num >= 0``, ``den > 0``.

    One 63-bit uniform word ``W`` per element decides ``W / 2**63 < exp(-x)``
    against a float approximation ``p`` of ``exp(-x)``: when ``W`` lies outside
    the band ``[p - 2**-40, p + 2**-40] * 2**63`` the float answer is the exact
    answer (numpy's ``exp`` and the int-to-float conversions are accurate to
    ~2**-52, far inside the band; ``test_noise.py`` checks the platform). Inside
    the band (probability ~2**-39) the comparison is completed exactly with more
    random bits and a correctly rounded ``decimal`` value of ``exp(-x)``
    (:func:`resolve_exactly`). The law is exactly Bernoulli(exp(-x)).
    """
    num = np.atleast_1d(np.asarray(num))
    den = np.atleast_1d(np.asarray(den))
    size = max(len(num), len(den))
    if len(num) != size:
        num = np.broadcast_to(num, size)
    if len(den) != size:
        den = np.broadcast_to(den, size)
    if num.dtype == object or den.dtype == object:
        x = np.array([int(a) / int(b) for a, b in zip(num, den)], dtype=float)
    else:
        x = num.astype(float) / den.astype(float)
    if np.any(x < 0):
        raise ValueError("bernoulli_exp needs num/den >= 0")
    p = np.exp(-x)
    w = (stream.words(size) >> np.uint64(1)).astype(np.int64)
    lo, in_band = _band(p, w)
    out = w < lo
    for i in np.nonzero(in_band)[0]:
        out[i] = resolve_exactly(stream, int(w[i]), int(num[i]), int(den[i]))
    return out


def _band(p: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The float decision's lower edge and the words it cannot decide.

    ``w < lo`` surely means ``W / 2**63 < exp(-x)``; words in ``[lo, hi)`` are
    resolved exactly. When ``p + band`` reaches the top of the int64 range
    (``exp(-x)`` within 2**-40 of 1, e.g. ``x = 0``), the band is open above:
    every ``w >= lo`` is resolved exactly (clamping ``hi`` would decide the
    top 4,096 words as False, which is wrong for ``exp(-0) = 1``).
    """
    lo = np.minimum(np.maximum(np.floor((p - EXACT_BAND) * _TWO63), 0.0), _MAX_I63).astype(np.int64)
    hi_f = np.ceil((p + EXACT_BAND) * _TWO63)
    open_above = hi_f >= _MAX_I63
    hi = np.minimum(hi_f, _MAX_I63).astype(np.int64)
    return lo, (w >= lo) & ((w < hi) | open_above)


def bernoulli_exp_float(stream: RandomStream, x: np.ndarray) -> np.ndarray:
    """Exact Bernoulli(exp(-x)) for float ``x >= 0``, each float taken as the exact
    rational it represents (same fast path; the band path uses the exact
    ``Decimal(float)``). Used where the exponent is itself a float-computed
    score whose rounding is covered by the caller's sensitivity margin (PMW)."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    if np.any(x < 0) or not np.all(np.isfinite(x)):
        raise ValueError("bernoulli_exp_float needs finite x >= 0")
    p = np.exp(-x)
    w = (stream.words(len(x)) >> np.uint64(1)).astype(np.int64)
    lo, in_band = _band(p, w)
    out = w < lo
    for i in np.nonzero(in_band)[0]:
        num, den = float(x[i]).as_integer_ratio()
        out[i] = resolve_exactly(stream, int(w[i]), num, den)
    return out


def resolve_exactly(stream: RandomStream, w: int, num: int, den: int) -> bool:
    """Decide ``(w + V) / 2**63 < exp(-num/den)`` exactly, V uniform in [0, 1).

    ``exp(-num/den)`` is computed with ``decimal`` at ``prec`` digits (error
    below 10**(3-prec)); V is drawn 64 bits at a time until the comparison is
    decided with certainty, raising the precision if ever needed.
    """
    if num == 0:  # exp(-0) = 1 > (w + V) / 2**63 always
        return True
    prec = 60
    frac_bits = 0
    u = w  # U = u / 2**(63 + frac_bits)
    while True:
        with decimal.localcontext() as ctx:
            ctx.prec = prec
            target = (-(decimal.Decimal(num) / decimal.Decimal(den))).exp()
            err = decimal.Decimal(10) ** (3 - prec)
            for _ in range(4):
                u = (u << 64) | int(stream.words(1)[0])
                frac_bits += 64
                scale = decimal.Decimal(2) ** (63 + frac_bits)
                lo_u = decimal.Decimal(u) / scale
                hi_u = decimal.Decimal(u + 1) / scale
                if hi_u <= target - err:
                    return True
                if lo_u >= target + err:
                    return False
        prec *= 2


def cks_bernoulli_exp_loop(stream: RandomStream, num, den) -> np.ndarray:
    """Reference: CKS Algorithm 1 for num/den in [0, 1], integer arithmetic only.

    Bernoulli(gamma/K) is drawn as Bernoulli(gamma) AND Bernoulli(1/K). Used by
    tests to cross-check :func:`bernoulli_exp`.
    """
    n = len(num)
    k = np.ones(n, dtype=np.int64)
    active = np.arange(n)
    num = np.asarray(num)
    den = np.asarray(den)
    while len(active):
        a = stream.bernoulli(num[active], den[active])
        a &= stream.bernoulli(np.ones(len(active), np.int64), k[active])
        k[active[a]] += 1
        active = active[a]
    return (k % 2) == 1


def _geometric_e(stream: RandomStream, m: int) -> np.ndarray:
    """V with P(V >= k) = exp(-k): successes of Bernoulli(exp(-1)) before a failure."""
    v = np.zeros(m, dtype=np.int64)
    act = np.arange(m)
    one = np.ones(m, dtype=np.int64)
    while len(act):
        a = bernoulli_exp(stream, one[: len(act)], one[: len(act)])
        v[act[a]] += 1
        act = act[a]
    return v


def dlap_integer_ratio(stream: RandomStream, t: int, s: int, size: int) -> np.ndarray:
    """CKS Algorithm 2: exact discrete Laplace with scale t/s (t, s positive ints).

    Reference implementation (integer arithmetic only); the samplers use the
    faster :func:`_dlap_fast`, and tests check both against the exact pmf.

    P(Z = z) proportional to exp(-|z| * s / t). Candidates are drawn in
    batches larger than needed and the first accepted ones (in index order)
    are kept: accepted candidates are i.i.d. draws of the target law.
    """
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        need = size - filled
        m = int(need * 1.8) + 4
        tt = np.full(m, t, dtype=np.int64)
        u = stream.uniform_below(tt)
        d = bernoulli_exp(stream, u, tt)
        v = _geometric_e(stream, m)
        x = u + t * v
        y = x // s
        b = (stream.words(m) >> np.uint64(63)).astype(bool)
        accept = d & ~(b & (y == 0))
        z = np.where(b, -y, y)[accept][:need]
        out[filled : filled + len(z)] = z
        filled += len(z)
    return out


INVERSION_MARGIN = 2.0**-30  # relative band around q^k resolved exactly


def geometric_inversion(stream: RandomStream, t: int, s: int, size: int) -> np.ndarray:
    """Exact X with P(X >= k) = q^k, q = exp(-s/t), by inversion: X >= k iff U <= q^k.

    ``U`` is a lazily refined uniform binary fraction (first 64 bits here).
    The float guess ``floor(ln U / ln q)`` is accepted when ``U`` lies outside a
    relative band of 2^-30 around both boundaries ``q^X`` and ``q^(X+1)``
    (float error is ~2^-50 there); otherwise :func:`_geometric_exact` decides
    with more random bits and correctly rounded decimals.
    """
    lnq = -s / t
    w = stream.words(size)
    if size <= SMALL_DRAW:
        return _geometric_inversion_small(stream, w, t, s, lnq)
    x, ok = _inversion_guess(w, lnq)
    out = x.astype(np.int64)
    for i in np.nonzero(~ok)[0]:
        out[i] = _geometric_exact(stream, int(w[i]), t, s, int(x[i]))
    return out


def _inversion_guess(w: np.ndarray, lnq: float) -> tuple[np.ndarray, np.ndarray]:
    """The float guesses ``floor(ln U / ln q)`` of the words ``w`` (any shape) and where each is provably exact
    (``U`` outside the 2^-30 band around both of its boundaries)."""
    u_lo = w.astype(float) * 2.0**-64  # rounding here is absorbed by the band
    u_hi = u_lo + 2.0**-64 * 1.0000001
    mid = np.maximum((u_lo + u_hi) / 2, 2.0**-70)
    x = np.floor(np.log(mid) / lnq)
    x = np.maximum(x, 0.0)
    upper = np.exp(x * lnq)  # q^x
    lower = np.exp((x + 1) * lnq)  # q^(x+1)
    ok = (u_hi < upper * (1 - INVERSION_MARGIN)) & (u_lo > lower * (1 + INVERSION_MARGIN)) & (x * -lnq < 2.0**12)
    return x, ok


#: Draws of at most this many geometrics take scalar math (:func:`_geometric_inversion_small`): numpy's per-call
#: overhead is most of a small node release's noise (a count: 16 us against 37 us for one discrete Laplace
#: value, 1.4x at 4 values; even at about 8 values, 2 geometrics a value).
SMALL_DRAW = 12


def _geometric_inversion_small(stream: RandomStream, w: np.ndarray, t: int, s: int, lnq: float) -> np.ndarray:
    """:func:`geometric_inversion` of the words ``w`` with scalar math: the same values and the same words drawn.

    A value is accepted only when ``U`` lies outside the 2^-30 band around both of its boundaries, where the
    float guess is exactly right whichever library rounded its logarithm; otherwise the exact refinement
    decides, in index order after all values, as the vectorised form does. So the output is the exact
    X = max{k: U <= q^k} either way, and the words drawn are the same (``tests/test_noise.py`` compares the
    two forms draw for draw)."""
    log, exp, floor = math.log, math.exp, math.floor
    lo_band, hi_band = 1 + INVERSION_MARGIN, 1 - INVERSION_MARGIN
    values = []
    redo = []
    for i, wi in enumerate(w.tolist()):
        u_lo = wi * 2.0**-64  # the int converted to float first, as float(wi) * 2^-64
        u_hi = u_lo + 2.0**-64 * 1.0000001
        # the vectorised form's max(mid, 2^-70) and max(x, 0.0) never bind here: mid >= 2^-65, and mid <= 1 with
        # lnq < 0 gives x >= 0 (math.floor returns an int: x is 0.0 at mid = 1)
        x = float(floor(log((u_lo + u_hi) / 2) / lnq))
        if u_hi < exp(x * lnq) * hi_band and u_lo > exp((x + 1) * lnq) * lo_band and x * -lnq < 2.0**12:
            values.append(int(x))
        else:
            values.append(0)
            redo.append((i, wi, x))
    out = np.array(values, dtype=np.int64)
    for i, wi, x in redo:
        out[i] = _geometric_exact(stream, wi, t, s, int(x))
    return out


#: One-way steps of the exact search before it gallops (:func:`_geometric_exact`): a float guess is within a step or
#: two of X unless the first word leaves U's interval wide against q's steps (a word near 0 at a scale of 10^11:
#: 100,000 steps of one did not reach X there, and the search gave up). Up to this many, the search is the walk it
#: always was, so every draw it decided before consumes the same words and gives the same value.
WALK_BEFORE_GALLOP = 64


def _geometric_exact(stream: RandomStream, w: int, t: int, s: int, guess: int) -> int:
    """X = max{k: U <= q^k} with U in [w/2^bits, (w+1)/2^bits), refined as needed.

    From the guess, a walk of single steps towards X; after ``WALK_BEFORE_GALLOP`` steps one way, steps that
    double until X is bracketed, then bisection. Every comparison is decided with a margin (``le_qk``) or refines
    U (one more word) and the precision; the answer is the k with U <= q^k and U > q^(k+1), whichever path found
    it (X is exact; the path decides only how many words are read, and only past the walk)."""
    bits, prec = 64, 50
    k = max(guess, 0)
    while True:
        with decimal.localcontext() as ctx:
            ctx.prec = prec
            lnq = -decimal.Decimal(s) / decimal.Decimal(t)
            err = decimal.Decimal(10) ** (5 - prec)
            lo = decimal.Decimal(w) / decimal.Decimal(2) ** bits
            hi = decimal.Decimal(w + 1) / decimal.Decimal(2) ** bits

            def le_qk(kk, lnq=lnq, lo=lo, hi=hi, err=err):  # +1: U <= q^kk, -1: U > q^kk, 0: unsure
                if kk <= 0:
                    return 1
                qk = (lnq * kk).exp()
                if hi <= qk * (1 - err):
                    return 1
                if lo > qk * (1 + err):
                    return -1
                return 0

            found, k = _search(le_qk, k)
            if found:
                return k
        w = (w << 64) | int(stream.words(1)[0])  # undecided: refine U and precision
        bits += 64
        prec += 30


def _search(le_qk, k: int) -> tuple[bool, int]:
    """(True, X) if every comparison on the way was decided; else (False, where to go on from once U is refined)."""
    for _ in range(WALK_BEFORE_GALLOP):
        a, b = le_qk(k), le_qk(k + 1)
        if a == 1 and b == -1:
            return True, k
        if a == -1:
            k -= 1
        elif b == 1:
            k += 1
        else:
            return False, k
    # far from X: bracket it with doubling steps (below: U <= q^below; above: U > q^above), then bisect
    c = le_qk(k)
    if c == 0:
        return False, k
    if c == 1:
        below, above, step = k, None, 1
        while above is None:
            c = le_qk(below + step)
            if c == 0:
                return False, below
            if c == 1:
                below += step
                step *= 2
            else:
                above = below + step
    else:  # U > q^k: go down; le_qk(kk <= 0) is 1, so this ends
        above, below, step = k, None, 1
        while below is None:
            c = le_qk(above - step)
            if c == 0:
                return False, above - step
            if c == -1:
                above -= step
                step *= 2
            else:
                below = above - step
    while above - below > 1:
        mid = (below + above) // 2
        c = le_qk(mid)
        if c == 0:
            return False, mid
        if c == 1:
            below = mid
        else:
            above = mid
    return True, below


def _dlap_fast(stream: RandomStream, t: int, s: int, size: int) -> np.ndarray:
    """Discrete Laplace with scale t/s as the difference of two i.i.d. geometrics
    (P(G >= k) = q^k): P(G1 - G2 = z) is proportional to q^|z|."""
    g = geometric_inversion(stream, t, s, 2 * size)
    return g[:size] - g[size:]


def discrete_laplace(stream: RandomStream, scale: Number, size: int = 1) -> np.ndarray:
    """Exact samples of the discrete Laplace (two-sided geometric) distribution.

    ``P(Z = z) proportional to exp(-|z| / scale)``. Adding it to an integer
    query of L1 sensitivity ``Delta`` with ``scale >= Delta / eps`` is eps-DP.

    ``scale`` is rounded up (:func:`as_ratio_up`); returns int64 array.
    """
    if stream.disabled:
        return np.zeros(size, dtype=np.int64)
    r = as_ratio_up(scale)
    return _dlap_fast(stream, r.numerator, r.denominator, size)


def discrete_laplace_rows(seeds: Sequence[bytes], scale: Number, size: int) -> np.ndarray:
    """Row i: ``discrete_laplace(RandomStream(seeds[i]), scale, size)``, the same values from the same words.

    For many releases of one scale at once (a counter's node releases ahead, ``ContinualCounter``): each
    stream's first ``2 size`` words in one array (:func:`first_words`), the float guesses of every geometric at
    once, and a row with any guess inside the band (about one in 2^28 geometrics) drawn again from its own stream
    by the one-stream sampler, which decides it exactly with the words that follow (the same words, in the same
    order, as a lone draw). An accepted guess is the exact X whichever library rounded the logarithm
    (:func:`geometric_inversion`), so a row equals the lone draw's: the values are the same exact samples, not
    an approximation of them (``tests/test_noise_rows.py`` compares them draw for draw)."""
    r = as_ratio_up(scale)
    t, s = r.numerator, r.denominator
    m = 2 * size
    w = first_words(seeds, m)
    x, ok = _inversion_guess(w, -s / t)
    g = x.astype(np.int64)
    for i in np.nonzero(~ok.all(axis=1))[0]:
        g[i] = geometric_inversion(RandomStream(seeds[i]), t, s, m)
    return g[:, :size] - g[:, size:]


def discrete_gaussian(stream: RandomStream, sigma2: Number, size: int = 1) -> np.ndarray:
    """Exact samples of the discrete Gaussian N_Z(0, sigma2) (CKS Algorithm 3).

    ``P(Z = z) proportional to exp(-z**2 / (2 sigma2))``. Adding it to an integer
    query of L2 sensitivity ``Delta`` is ``Delta**2 / (2 sigma2)``-zCDP (CKS Thm 4).

    ``sigma2`` is rounded up (:func:`as_ratio_up`); returns int64 array.
    """
    if stream.disabled:
        return np.zeros(size, dtype=np.int64)
    s2 = as_ratio_up(sigma2)
    a, b = s2.numerator, s2.denominator
    tau = math.isqrt(a // b) + 1  # floor(sigma) + 1
    out = np.empty(size, dtype=np.int64)
    filled = 0
    den = 2 * a * b * tau * tau
    while filled < size:
        need = size - filled
        m = int(need * 1.6) + 4
        y = _dlap_fast(stream, tau, 1, m)
        num = np.array([(abs(int(v)) * b * tau - a) ** 2 for v in y], dtype=object)
        c = bernoulli_exp(stream, num, np.full(m, den, dtype=object))
        z = y[c][:need]
        out[filled : filled + len(z)] = z
        filled += len(z)
    return out


def lattice_granularity(scale: float, bits: int = 20) -> float:
    """A power of two ``g`` with ``g <= scale / 2**bits``: the lattice spacing used
    to release a real-valued quantity with noise of the given scale. Rounding a
    value to ``g * Z`` moves it by at most ``g / 2``, far below the noise."""
    if scale <= 0:
        raise ValueError("scale must be positive")
    return 2.0 ** math.floor(math.log2(scale) - bits)


# ----------------------------------------------------------------------------
# Reference pmfs and moments (for tests, error bounds and benchmarks).
# ----------------------------------------------------------------------------


def discrete_laplace_pmf(z: Sequence[int], scale: float) -> np.ndarray:
    q = math.exp(-1.0 / float(scale))
    z = np.abs(np.asarray(z, dtype=float))
    return (1 - q) / (1 + q) * np.power(q, z)


def discrete_laplace_variance(scale: float) -> float:
    q = math.exp(-1.0 / float(scale))
    return 2 * q / (1 - q) ** 2


def _dgauss_normaliser(sigma2: float) -> tuple[np.ndarray, np.ndarray]:
    s = math.sqrt(float(sigma2))
    lim = int(math.ceil(s * 40)) + 10
    zs = np.arange(-lim, lim + 1)
    w = np.exp(-(zs.astype(float) ** 2) / (2 * float(sigma2)))
    return zs, w / w.sum()


def discrete_gaussian_pmf(z: Sequence[int], sigma2: float) -> np.ndarray:
    zs, p = _dgauss_normaliser(sigma2)
    lim = zs[-1]
    z = np.asarray(z)
    out = np.zeros(len(z))
    inside = np.abs(z) <= lim
    out[inside] = p[z[inside] + lim]
    return out


def discrete_gaussian_variance(sigma2: float) -> float:
    """Variance of N_Z(0, sigma2) (<= sigma2, CKS Prop. 19)."""
    zs, p = _dgauss_normaliser(sigma2)
    return float(np.sum(p * zs.astype(float) ** 2))
