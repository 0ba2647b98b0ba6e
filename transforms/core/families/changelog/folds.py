"""The maths of the changelog releases (Pan 004 §4): the fold counts (how many
nodes one entry's mutations can affect, under at most k mutations and/or a
time bound), the c-ary cover of a range, an entry's sensitivity ratio, and
the options of DCR, HDCR and SWCR (proofs: ``docs/changelog.md``)."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from transforms.core.foundation.accounting import Budget, compose_sequential
from transforms.core.foundation.state import state_class

__all__ = [
    "most_span",
    "dcr_fold",
    "hdcr_layer_folds",
    "hdcr_fold",
    "swcr_fold",
    "hybrid_fold",
    "fold",
    "cover",
    "prefix_nodes",
    "num_digits",
    "ceil_log",
    "entry_sensitivity_ratio",
    "variance_weight",
    "DCROptions",
    "HDCROptions",
    "SWCROptions",
    "SWCR_METHODS",
    "DESIGN_HORIZON",
    "MAX_BRANCHING",
]

DESIGN_HORIZON = 4096  # units an HDCR is sized for when the release has no configured end
MAX_BRANCHING = 32


# ---------------------------------------------------------------------------
# accounting by constraint
# ---------------------------------------------------------------------------


def most_span(t, b: int) -> int:
    """MostSpan(t, B) (Def. 4.4): the largest number of consecutive ranges
    ``(t_{i-1}, t_i]`` (``t_0 = -inf``) that a window ``[s, s + B]`` meets, for
    an increasing sequence ``t`` of integer range ends (ticks) and B >= 0.

    A window can be slid right until it starts at the end of its first range
    without meeting fewer ranges, so the maximum is over windows starting at
    some ``t_i``; O(n log n). (The paper's listing returns 0 when the window
    reaches past the last end; here such windows count the ranges to the end.)
    """
    t = [int(x) for x in t]
    if not t:
        return 0
    if any(b2 <= a2 for a2, b2 in zip(t, t[1:])):
        raise ValueError("range ends must increase")
    if b < 0:
        raise ValueError(f"B must be >= 0, got {b}")
    n = len(t)
    best = 0
    for i, ti in enumerate(t):
        j = bisect.bisect_left(t, ti + b)  # the range holding tick ti + B (0-based), or n past the end
        best = max(best, min(j, n - 1) - i + 1)
    return best


def _check_k(k):
    if k is not None and (isinstance(k, bool) or int(k) < 1):
        raise ValueError(f"k must be an integer >= 1 or None, got {k!r}")


def _time_bounded(b: int | None, span: int) -> int | None:
    """ceil(B / span) + 1: nodes of span ``span`` ticks met by B+1 consecutive ticks."""
    if b is None:
        return None
    return -(-int(b) // int(span)) + 1


def _min_fold(*folds) -> int:
    given = [f for f in folds if f is not None]
    if not given:
        raise ValueError("an entry-level fold needs k (at most k mutations) or B (time-bounded mutations)")
    return min(given)


def dcr_fold(k: int | None = None, b: int | None = None, w: int = 1) -> int:
    """How many nodes of a DCR with a fixed period of ``w`` ticks one entry can
    affect: k (at most k mutations, Thm 4.1), ceil(B/W) + 1 (mutations within
    B ticks of the first, Cor. 4.1), the smaller when both hold."""
    _check_k(k)
    return _min_fold(k, _time_bounded(b, w))


def hdcr_layer_folds(h: int, c: int, k: int | None = None, b: int | None = None, w: int = 1) -> tuple[int, ...]:
    """Per layer i < h (nodes of c^i W ticks): the DCR fold of that layer."""
    _check_k(k)
    if h < 1 or c < 2:
        raise ValueError("an HDCR needs h >= 1 and c >= 2")
    return tuple(_min_fold(k, _time_bounded(b, c**i * w)) for i in range(h))


def hdcr_fold(h: int, c: int, k: int | None = None, b: int | None = None, w: int = 1) -> int:
    """HDCR (Thm 4.3): hk (at most k), the sum over layers of ceil(B/(c^i W))+1
    (time-bounded), per layer the smaller when both hold."""
    return sum(hdcr_layer_folds(h, c, k, b, w))


def swcr_fold(w: int, p: int, k: int | None = None, b: int | None = None) -> int:
    """SWCR(W, P) (Thms 4.5, 4.6): k ceil(W/P) (at most k), ceil((B+W)/P)
    (time-bounded), the smaller when both hold (W, P, B in ticks)."""
    _check_k(k)
    if w < 1 or p < 1:
        raise ValueError("an SWCR needs W >= 1 and P >= 1")
    at_most = None if k is None else int(k) * -(-int(w) // int(p))
    timed = None if b is None else -(-(int(b) + int(w)) // int(p))
    return _min_fold(at_most, timed)


def hybrid_fold(*folds: int) -> int:
    """Thm 4.10: a population where every entry satisfies ONE of several
    constraints: the worst (largest) fold bounds the loss."""
    if not folds:
        raise ValueError("hybrid_fold needs at least one fold")
    return max(folds)


def fold(cost: Budget, times: int) -> Budget:
    """The ``times``-fold sequential composition of ``cost`` (pure eps and
    (eps, delta) add up, zCDP rho adds up)."""
    if times < 1:
        raise ValueError("a fold is at least 1")
    return compose_sequential([cost] * int(times))


# ---------------------------------------------------------------------------
# hierarchical nodes
# ---------------------------------------------------------------------------


def cover(lo: int, hi: int, c: int, h: int) -> list[tuple[int, int]]:
    """The nodes ``(layer i, index j)`` of an HDCR with branching c and height h
    whose ranges ``((j-1) c^i, j c^i]`` (in units) partition ``(lo, hi]``: from
    the left, the largest aligned node that fits (Thm 4.4: at most 2(c-1)h_min
    nodes with h_min = ceil(log_c(hi - lo)), h >= h_min)."""
    if lo < 0 or hi < lo:
        raise ValueError(f"not a range: ({lo}, {hi}]")
    out = []
    pos = lo
    spans = [c**i for i in range(h)]
    while pos < hi:
        for i in range(h - 1, -1, -1):
            s = spans[i]
            if pos % s == 0 and pos + s <= hi:
                out.append((i, pos // s + 1))
                pos += s
                break
    return out


def prefix_nodes(u: int, c: int, h: int) -> list[tuple[int, int]]:
    """The nodes of the prefix (0, u]: the top layer's closed nodes and, below,
    u's base-c digits (the same nodes as ``cover(0, u, c, h)``)."""
    return cover(0, u, c, h)


def num_digits(n: int, c: int) -> int:
    d = 0
    while n:
        n //= c
        d += 1
    return d


def ceil_log(n: int, c: int) -> int:
    """The smallest h >= 1 with c^h >= n."""
    h = 1
    while c**h < n:
        h += 1
    return h


def entry_sensitivity_ratio(mechanism) -> float:
    """Sensitivity of one entry's change over a range (``F y - F x``, x and y
    two values or absent) divided by the static mechanism's (one item), in its
    norm (L1 for Laplace, L2 for Gaussian)."""
    gauss = mechanism.noise_kind == "gaussian"
    name = mechanism.name
    if name == "count":
        return 1.0
    if name == "histogram":
        return math.sqrt(2.0) if gauss else 2.0
    a = getattr(mechanism, "_aq", None)
    if a is None:
        raise ValueError(f"{name}: the changelog releases answer count, histogram and linear query sets")
    cols = np.concatenate([a.astype(float), np.zeros((a.shape[0], 1))], axis=1).T  # values and absent
    item = mechanism.l2 if gauss else mechanism.l1
    best = 0.0
    for x in cols:
        diff = cols - x
        norms = np.sqrt((diff**2).sum(axis=1)) if gauss else np.abs(diff).sum(axis=1)
        best = max(best, float(norms.max()))
    return best / item


def variance_weight(noise_kind: str, f: int) -> float:
    """Node variance at an F-fold split, up to the common factor: Laplace
    scale ~ F (variance F^2), Gaussian rho / F (variance F)."""
    return float(f) ** 2 if noise_kind == "laplace" else float(f)


# ---------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------


def _int_option(name: str, value, lo: int = 1, none_ok: bool = True):
    if value is None and none_ok:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise ValueError(f"{name} must be an integer >= {lo}{' or None' if none_ok else ''}, got {value!r}")


def _check_shape(branching, height) -> None:
    """A hierarchy's branching (2..1024) and height (1..64), each None for the chosen one."""
    _int_option("branching", branching, lo=2)
    if branching is not None and branching > 1024:
        raise ValueError(f"branching must be at most 1024, got {branching}")
    _int_option("height", height)
    if height is not None and height > 64:
        raise ValueError(f"height must be at most 64, got {height}")


@state_class("options.dcr")
@dataclass(frozen=True)
class DCROptions:
    """Options of the disjoint continual release.

    Attributes:
      window: W, the periods (``every_ticks`` ticks each, default 1 tick) per
        node; a release at every node close. Default 1.
    """

    window: int = 1

    def __post_init__(self):
        _int_option("window", self.window, none_ok=False)


@state_class("options.hdcr")
@dataclass(frozen=True)
class HDCROptions:
    """Options of the hierarchical disjoint continual release.

    Attributes:
      window: W, periods per bottom node (a release at every bottom node's
        close). Default 1.
      branching: c >= 2; None (default): the c in 2..32 with the smallest mean
        variance of the current value over the horizon, for the configured
        constraint (``docs/changelog.md``).
      height: h >= 1; None (default): the number of base-c digits of the
        horizon in units (the configured end, else 4096 units), so a current
        value needs at most (c-1) nodes per layer.
    """

    window: int = 1
    branching: int | None = None
    height: int | None = None

    def __post_init__(self):
        _int_option("window", self.window, none_ok=False)
        _check_shape(self.branching, self.height)


SWCR_METHODS = ("auto", "direct", "hdcr")


@state_class("options.swcr")
@dataclass(frozen=True)
class SWCROptions:
    """Options of the sliding-window continual release.

    Attributes:
      window: W, the window in periods: each release is the change over the
        last W periods. Default 7.
      period: P, periods between releases. Default 1.
      method: ``direct`` (one query per window, Thms 4.5-4.6), ``hdcr``
        (aggregated from an HDCR over units of gcd(W, P) periods, Thm 4.7) or
        ``auto`` (default: the lower variance for the same guarantee).
      branching: c of the derived HDCR; None: the c with the smallest
        worst-window variance.
      height: h of the derived HDCR; None: ceil(log_c(W / gcd(W, P))) (at
        least 1), as Thm 4.7.
    """

    window: int = 7
    period: int = 1
    method: str = "auto"
    branching: int | None = None
    height: int | None = None

    def __post_init__(self):
        _int_option("window", self.window, none_ok=False)
        _int_option("period", self.period, none_ok=False)
        if self.method not in SWCR_METHODS:
            raise ValueError(f"method must be one of {', '.join(SWCR_METHODS)}, got {self.method!r}")
        _check_shape(self.branching, self.height)
