"""Sparse vector technique and infinite private partitioning (000, Alg. 1 and 2).

The partitioner splits the tick axis into segments ``s_j = (t_{j-1}, t_j]``.
Segment ``j`` runs a fresh SVT instance with threshold

    theta_j = (7 / eps) ln(2 T_j / beta_j),  T_1 = 2, T_j = t_{j-1}^2,
    beta_j = 6 beta / (pi^2 j^2),

on the number of updates in the segment so far; it closes at the first tick
where SVT halts or at the deadline ``T_j``. Instances see disjoint segments,
so the whole partitioning is eps-DP by adaptive parallel composition (000,
Thm 6), for an unbounded number of segments.

SVT (Alg. 1) with integer queries: ``theta_hat = theta + Z0``,
``Z0 ~ DLap(2/eps)``; at each tick halt iff ``c + Z > theta_hat``,
``Z ~ DLap(4/eps)``. The discrete Laplace is used because the count is an
integer: the proof of Alg. 1 (shift the threshold noise by 1 and the halting
query's noise by 2) only uses integer shifts, so it holds verbatim.

**Skipping empty ticks** (ALGORITHMS.md §2; proof in ``docs/partitioning.md``).
While the count ``c`` does not change, the per-tick halting events are i.i.d.
Bernoulli(p(c)) with ``p(c) = P(Z >= k0)``, ``k0 = floor(theta) + Z0 - c + 1``.
So from a tick ``u`` on which the count became ``c``, the halting tick is
``u + K - 1`` with ``K ~ Geometric(p(c))`` on {1, 2, ...}, unless an update
arrives first (then the draw is discarded: by memorylessness the ticks up to
that update carried no halt with exactly the right probability). We only need
``min(K, cap)`` where ``cap`` reaches the deadline, and sample it exactly
(:func:`geometric_capped`). Work is O(ticks with updates + segments), not
O(ticks). :class:`TickByTickPartitioner` is the literal loop, kept as the
reference the statistical test compares against.
"""

from __future__ import annotations

import decimal
import functools
import math
from dataclasses import dataclass

import numpy as np

from transforms.core.foundation.accounting import Ledger, PureDP, Scope
from transforms.core.foundation.noise import NoiseSource, RandomStream, as_ratio_up, discrete_laplace
from transforms.core.foundation.state import state_class

__all__ = [
    "PartitionParams",
    "InfinitePartitioner",
    "TickByTickPartitioner",
    "geometric_capped",
    "halting_probability",
]


@state_class("partition.params")
@dataclass(frozen=True)
class PartitionParams:
    """Parameters of Alg. 2 (exactly the paper's)."""

    epsilon: float
    beta: float = 0.05

    def __post_init__(self):
        if not self.epsilon > 0:
            raise ValueError(f"partitioning epsilon must be > 0, got {self.epsilon}")
        if not 0 < self.beta < 1:
            raise ValueError(f"partitioning beta must be in (0, 1), got {self.beta}")

    def deadline(self, j: int, prev_close: int) -> int:
        """T_j: 2 for j = 1, else t_{j-1}^2."""
        return 2 if j == 1 else prev_close * prev_close

    def beta_j(self, j: int) -> float:
        return 6 * self.beta / (math.pi**2 * j * j)

    def theta(self, j: int, prev_close: int) -> float:
        return (7 / self.epsilon) * math.log(2 * self.deadline(j, prev_close) / self.beta_j(j))

    @property
    def threshold_scale(self) -> float:
        return 2 / self.epsilon

    @property
    def query_scale(self) -> float:
        return 4 / self.epsilon


@functools.lru_cache(maxsize=256)
def _scale_ratio(scale: float) -> tuple[int, int, float]:
    """(t, s, q) of the effective discrete Laplace scale t/s; q = exp(-s/t)."""
    r = as_ratio_up(scale)
    return r.numerator, r.denominator, math.exp(-r.denominator / r.numerator)


def _q_decimal(scale: float, prec: int) -> decimal.Decimal:
    r = as_ratio_up(scale)
    with decimal.localcontext() as ctx:
        ctx.prec = prec
        return (-(decimal.Decimal(r.denominator) / decimal.Decimal(r.numerator))).exp()


def halting_probability(k0: int, scale: float) -> float:
    """P(Z >= k0) for Z ~ DLap(scale) (float; exact values use decimals)."""
    q = _scale_ratio(scale)[2]
    if k0 >= 1:
        return q**k0 / (1 + q)
    return 1 - q ** (1 - k0) / (1 + q)


def survival_decimal(k0: int, scale: float, n: int, prec: int) -> decimal.Decimal:
    """(1 - p)^n with p = P(Z >= k0), as a decimal with relative error < 10^(5-prec)."""
    with decimal.localcontext() as ctx:
        ctx.prec = prec
        q = _q_decimal(scale, prec)
        if k0 >= 1:
            one_minus_p = 1 - q**k0 / (1 + q)
        else:
            one_minus_p = q ** (1 - k0) / (1 + q)
        if n == 0:
            return decimal.Decimal(1)
        return (one_minus_p.ln() * n).exp()


_LN2_64 = 64 * math.log(2)


def log_one_minus_p(k0: int, scale: float) -> float:
    """ln(1 - p), p = P(DLap(scale) >= k0), computed without cancellation."""
    q = _scale_ratio(scale)[2]
    lnq = math.log(q)
    if k0 >= 1:
        return math.log1p(-math.exp(k0 * lnq) / (1 + q))
    return (1 - k0) * lnq - math.log1p(q)


def geometric_capped(stream: RandomStream, k0: int, scale: float, cap: int) -> int:
    """Exact ``min(K, cap)`` for ``K ~ Geometric(p)``, ``p = P(DLap(scale) >= k0)``.

    ``K`` is the index of the first success of i.i.d. Bernoulli(p) trials, so
    ``P(K > n) = (1-p)^n``; with ``U`` uniform, ``K = min{n: U > (1-p)^n}``.
    ``U`` is a lazily refined binary fraction. Each comparison ``U ? (1-p)^n``
    is made in log space in floating point when it is decided by a margin
    (2^-42 + |ln s| 2^-46) 8x above the float error, and otherwise with ``decimal`` at increasing
    precision and more random bits until it is decided.
    """
    if cap < 1:
        raise ValueError("cap must be >= 1")
    l1p = log_one_minus_p(k0, scale)  # < 0
    w = int(stream.words(1)[0])
    bits = 64

    def decide(n: int) -> int:
        """-1 if U > (1-p)^n surely (K <= n), +1 if U <= (1-p)^n surely (K > n)."""
        nonlocal w, bits
        if n == 0:
            return 1
        ls = n * l1p
        # float error: ls has relative error ~2^-51 (log1p, exact n); log U has
        # absolute error ~2^-46 (log(w) ~ 44 with a 1-ulp error, minus 64 ln 2);
        # the margin keeps 8x headroom over both
        margin = 2.0**-42 + abs(ls) * 2.0**-46
        if w > 0 and bits == 64:
            lu_lo = math.log(w) - _LN2_64
            lu_hi = math.log(w + 1) - _LN2_64
            if lu_lo > ls + margin:
                return -1
            if lu_hi < ls - margin:
                return 1
        prec = 60
        while True:
            sd = survival_decimal(k0, scale, n, prec)
            err = sd * decimal.Decimal(10) ** (6 - prec)
            with decimal.localcontext() as ctx:
                ctx.prec = prec + 40
                lo = decimal.Decimal(w) / decimal.Decimal(2) ** bits
                hi = decimal.Decimal(w + 1) / decimal.Decimal(2) ** bits
                if lo > sd + err:
                    return -1
                if hi <= sd - err:
                    return 1
            w = (w << 64) | int(stream.words(1)[0])
            bits += 64
            prec += 40

    # float guess: K = ceil(ln U / ln(1-p))
    u_mid = (w + 0.5) * 2.0**-64
    ratio = math.log(u_mid) / l1p if l1p < 0 else math.inf  # inf: p so small that ln(1-p) is subnormal
    guess = math.ceil(ratio) if ratio < cap else cap
    n = int(min(max(guess, 1), cap))
    for _ in range(10_000):
        if n >= cap:
            if decide(cap - 1) == 1:  # K >= cap  <=>  U <= (1-p)^(cap-1)
                return cap
            n = cap - 1
            continue
        if decide(n) == -1:  # K <= n
            if n == 1 or decide(n - 1) == 1:
                return n
            n -= 1
        else:
            n += 1
    lo_n, hi_n = 1, cap  # pragma: no cover - the float guess is within a step or two
    while lo_n < hi_n:
        mid_n = (lo_n + hi_n) // 2
        if decide(mid_n) == -1:
            hi_n = mid_n
        else:
            lo_n = mid_n + 1
    return lo_n


@state_class("partition.infinite")
class InfinitePartitioner:
    """Alg. 2 with the O(1) skip over empty ticks.

    Drive it with :meth:`observe` (a tick with ``n > 0`` updates, ticks in
    increasing order) and :meth:`advance` (no update up to a tick). Both return
    the list of segment close ticks that happened. :attr:`next_close` is the
    tick at which the open segment closes if no update arrives (a Beam timer).

    Privacy: eps-DP (update-level: one more update changes one segment's
    count by 1). Each SVT instance is charged ``PureDP(eps)`` as a member of
    one parallel scope.
    """

    def __init__(self, params: PartitionParams, *, coords=(), scope: Scope | None = None):
        self.params = params
        self.coords = tuple(coords)
        self.scope = scope if scope is not None else Ledger(PureDP(params.epsilon), keep_records=False).root
        self._par = self.scope.child("partition", Scope.PARALLEL)
        self.j = 0  # index of the open segment (0 = not started)
        self.prev_close = 0  # t_{j-1}
        self.count = 0  # updates in the open segment so far
        self.theta_hat_floor = 0  # floor(theta_j) + Z0
        self.deadline_tick = 0
        self.next_close = 0
        self.closes = 0
        self.last_tick = 0  # last tick processed
        # the k-th halting draw of segment j comes from its own stream at
        # coordinates (..., "svt", j, "ticks", k): a deterministic function of the
        # key and (j, k), so the state is plain integers (no open stream)
        self.draws = 0

    # -- internals ------------------------------------------------------------
    def _start_segment(self, noise: NoiseSource) -> None:
        self.j += 1
        j, p = self.j, self.params
        coords = self.coords + ("svt", j)
        self._par.charge(PureDP(p.epsilon), coords)
        z0 = int(discrete_laplace(noise.stream(*coords, "threshold"), p.threshold_scale, 1)[0])
        theta = p.theta(j, self.prev_close)
        self.theta_hat_floor = math.floor(theta) + z0
        self.count = 0
        start = self.prev_close + 1
        self.deadline_tick = max(p.deadline(j, self.prev_close), start)
        self.draws = 0
        self._draw_from(start, noise)

    def _draw_from(self, u: int, noise: NoiseSource) -> None:
        """The count is ``self.count`` from tick ``u`` on: draw the halting tick."""
        cap = self.deadline_tick - u + 1
        if noise.is_disabled:
            # noise off: the exact SVT (halts iff count > theta) or the deadline
            k = 1 if self.count > self.theta_hat_floor else cap
        else:
            k0 = self.theta_hat_floor - self.count + 1
            stream = noise.stream(*self.coords, "svt", self.j, "ticks", self.draws)
            self.draws += 1
            k = geometric_capped(stream, k0, self.params.query_scale, cap)
        self.next_close = u + min(k, cap) - 1

    def _close(self, noise: NoiseSource) -> int:
        t = self.next_close
        self.closes += 1
        self.prev_close = t
        self._start_segment(noise)
        return t

    # -- driving ---------------------------------------------------------------
    def advance(self, tick: int, noise: NoiseSource) -> list[int]:
        """No update in ticks ``(last_tick, tick]``; return the closes."""
        if self.j == 0:
            self._start_segment(noise)
        out = []
        while self.next_close <= tick:
            out.append(self._close(noise))
        self.last_tick = max(self.last_tick, tick)
        return out

    def observe(self, tick: int, n: int, noise: NoiseSource) -> list[int]:
        """``n >= 0`` updates at ``tick`` (> every tick seen before)."""
        if tick <= self.last_tick and self.j > 0:
            raise ValueError(f"ticks must increase: got {tick} after {self.last_tick}")
        out = self.advance(tick - 1, noise)
        if n > 0:
            self.count += n
            self._draw_from(tick, noise)
        out += self.advance(tick, noise)
        return out

    @property
    def open_segment(self) -> int:
        return max(self.j, 1)


class TickByTickPartitioner:
    """The literal Alg. 2 loop (one SVT query per tick); the reference for tests."""

    def __init__(self, params: PartitionParams, *, coords=()):
        self.params = params
        self.coords = tuple(coords)

    def run(self, counts: np.ndarray, noise: NoiseSource) -> list[int]:
        """Close ticks for ``counts[t-1]`` updates at tick t = 1..len(counts)."""
        p = self.params
        closes, j, prev, c = [], 1, 0, 0
        z0 = int(discrete_laplace(noise.stream(*self.coords, "ref", j, "thr"), p.threshold_scale, 1)[0])
        theta_hat = math.floor(p.theta(j, prev)) + z0
        deadline = p.deadline(j, prev)
        # one i.i.d. query noise per tick, drawn up front (same law as per tick)
        zs = discrete_laplace(noise.stream(*self.coords, "ref", "queries"), p.query_scale, len(counts))
        for t in range(1, len(counts) + 1):
            c += int(counts[t - 1])
            z = int(zs[t - 1])
            if c + z > theta_hat or t >= deadline:
                closes.append(t)
                j += 1
                prev = t
                c = 0
                z0 = int(discrete_laplace(noise.stream(*self.coords, "ref", j, "thr"), p.threshold_scale, 1)[0])
                theta_hat = math.floor(p.theta(j, prev)) + z0
                deadline = p.deadline(j, prev)
        return closes
