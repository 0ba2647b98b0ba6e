"""A histogram consistent with the count: post-processing of one release.

A count query and a histogram query over the same stream estimate the same
total: every live entry falls in exactly one cell of a histogram (a record
whose field lies outside the declared domain is dead-lettered, never
counted), so the true cells ``h*`` satisfy ``h* >= 0`` and
``sum(h*) = n``, the true count. Independent noise breaks both: cells come
out negative and their sum differs from the released count. Users expect
one picture, so with ``release.consistent: true`` every histogram is
replaced by its Euclidean projection onto

    K(C) = { h : h >= 0, sum(h) = C },    C = max(count estimate, 0),

and the count is released as ``C``. Both are functions of released answers
only (post-processing), so they cost no privacy and change no noise.

**Error bound.** Let the histogram's released bound be ``B_h`` (all cells at
once, with probability ``1 - beta_h``) and the count's ``B_c`` (probability
``1 - beta_c``). On the event that both hold (probability at least
``1 - beta_h - beta_c``, a union bound), every cell of the projection is
within ``max(2 B_h, B_c)`` of the truth. Proof: the projection is
``p_i = max(x_i - tau, 0)`` with ``tau`` the unique threshold giving
``sum(p) = C``; write ``x_i = h*_i + e_i``, ``|e_i| <= B_h``. ``C`` is
within ``B_c`` of ``n`` (``n >= 0``: clamping at 0 never moves an estimate
away from it).

* ``|tau| <= B_h``: a cell with ``p_i > 0`` has error ``|e_i - tau| <= 2 B_h``;
  a cell with ``p_i = 0`` has ``x_i <= tau``, so its error is
  ``h*_i <= tau + B_h <= 2 B_h``.
* ``tau > B_h``: every cell's error has the same sign: ``h*_i - p_i`` is
  ``tau - e_i > 0`` for ``p_i > 0`` and ``h*_i >= 0`` for ``p_i = 0``. They
  sum to ``n - C <= B_c``, so each is at most ``B_c``.
* ``tau < -B_h``: every ``x_i - tau > h*_i >= 0``, so no cell is clamped and
  every error ``p_i - h*_i = e_i - tau`` is positive; they sum to
  ``C - n <= B_c``, so each is at most ``B_c``.

The bound is attained up to the search's resolution (``B_c``: all mass in one
cell; ``2 B_h``: many cells), see ``tests/test_consistency.py``.

**Rounding** (``release.round``): the count is ``R = round(C)`` (within
``B_c + 1/2`` of the integer ``n``), the histogram is projected onto
``K(R)`` and apportioned to integers summing to ``R`` by largest remainders
(each cell moves by less than 1): cells within ``max(2 B_h, B_c + 1/2) + 1``.

**The threshold bound** (``Consistency(..., threshold_bound=True)``; always
for a histogram projected onto its own total). Every cell of
``p = max(x - tau, 0)`` is within ``B_h + |tau|`` of the truth on the
histogram's event alone (probability ``1 - beta_h``), whatever the total:

* ``p_i > 0``: the error is ``|e_i - tau| <= B_h + |tau|``;
* ``p_i = 0``: ``x_i <= tau``, so ``0 <= h*_i = x_i - e_i <= tau + B_h``,
  at most ``B_h + |tau|`` (and at most ``B_h`` when ``tau < 0``).

``tau`` is a function of released values (public), so the bound can be
stated: the record carries ``B_h + |tau|`` with the histogram's own
``beta_h``. When the total is 0 every cell is 0 and ``tau`` is taken as
``max(max(x), 0)`` (any ``tau >= max(x)`` gives the same projection). The
lemma above is the worst case over ``tau`` (``2 B_h`` needs ``|tau| = B_h``);
on the benchmark streams ``|tau|`` is a fraction of ``B_h`` and the threshold
bound about 0.55-0.6 of ``max(2 B_h, B_c)`` (``docs/consistency.md``).
Rounding adds 1 (apportionment).

**Own total** (``Consistency(own_total=(...))``): a histogram with no count
to be consistent with is projected onto ``K(max(sum(x), 0))`` (rounded with
``round_answers``): its cells are >= 0 and sum to its own (clamped) total,
stated with the threshold bound and ``beta_h``. No count enters, so the count
(if any) is left as released.

The released records say what they are: the histogram's ``error_bound`` is
the bound above and its ``beta`` is ``beta_h + beta_c`` (the threshold bound:
``beta_h``). The count keeps its bound (plus 1/2 when rounded). A histogram whose count is not released at the
same (stream, tick) is left as released (every mechanism with a release period
releases all query sets together, so this does not happen in the pipelines).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterable

import numpy as np

from transforms.core.foundation.outputs import Answer

__all__ = [
    "project_to_simplex",
    "simplex_projection",
    "apportion",
    "consistent_histogram",
    "own_total_histogram",
    "Consistency",
    "make_consistent",
    "simplex_projection_rows",
]


def project_to_simplex(x, total: float) -> np.ndarray:
    """The Euclidean projection of ``x`` onto ``{h >= 0, sum(h) = total}``
    (``total >= 0``): ``max(x - tau, 0)`` with the threshold found by sorting
    (Held-Wolfe-Crowder; Duchi et al. 2008), O(d log d)."""
    return simplex_projection(x, total)[0]


@functools.lru_cache(maxsize=64)
def _ranks(n: int) -> np.ndarray:
    """``np.arange(1, n + 1)``, made once per size (read-only)."""
    r = np.arange(1, n + 1)
    r.flags.writeable = False
    return r


def simplex_projection(x, total: float) -> tuple[np.ndarray, float]:
    """``(p, tau)``: :func:`project_to_simplex` and its threshold ``tau``
    (``p = max(x - tau, 0)``; for ``total = 0``, ``max(max(x), 0)``, the
    smallest non-negative threshold giving all zeros)."""
    x = np.asarray(x, dtype=float)
    if total < 0 or not math.isfinite(total):
        raise ValueError(f"total must be finite and >= 0, got {total}")
    if x.size == 0:
        return x.copy(), 0.0
    if total == 0:
        return np.zeros_like(x), max(float(x.max()), 0.0)
    # the array methods np.sort / np.cumsum / np.nonzero / np.argmax call, without their dispatch (the same
    # operations: a projection per histogram and period, a year of one-minute periods has half a million)
    u = x.copy()
    u.sort()
    u = u[::-1]
    css = u.cumsum() - total
    idx = _ranks(x.size)
    hits = (u - css / idx > 0).nonzero()[0]
    rho = int(hits[-1]) if hits.size else 0  # index 0 always qualifies in exact arithmetic
    tau = css[rho] / (rho + 1)
    p = np.maximum(x - tau, 0.0)
    # the sum is exact up to rounding; put the residue on the largest cell so
    # that sum(p) == total holds for the released floats as well as possible
    p[int(p.argmax())] += total - float(p.sum())
    return np.maximum(p, 0.0), float(tau)


def simplex_projection_rows(x: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row i of ``(p, tau)``: :func:`simplex_projection` of ``x[i]`` onto ``totals[i]``, the same floats.

    ``x`` is an (n, d) float array, d >= 1. Each step is the one-row step along the rows' axis: a sort, a
    cumulative sum (sequential, as for one row), the same element-wise comparisons and divisions, and the sum of
    each contiguous row (numpy sums a contiguous run pairwise, one row or many), so the rounding is the same
    (``tests/test_consistency_rows.py`` compares them row for row). For a block of releases at once (a
    bounded run's 1,024 results: one numpy call for all instead of a dozen per histogram)."""
    x = np.ascontiguousarray(x, dtype=float)
    totals = np.asarray(totals, dtype=float)
    if not np.all(np.isfinite(totals)) or np.any(totals < 0):
        raise ValueError("totals must be finite and >= 0")
    n, d = x.shape
    u = np.sort(x, axis=1)[:, ::-1]
    css = np.cumsum(u, axis=1) - totals[:, None]
    hits = u - css / _ranks(d) > 0
    last = d - 1 - np.argmax(hits[:, ::-1], axis=1)
    rho = np.where(hits.any(axis=1), last, 0)  # index 0 always qualifies in exact arithmetic
    rows = np.arange(n)
    tau = css[rows, rho] / (rho + 1)
    p = np.maximum(x - tau[:, None], 0.0)
    top = p.argmax(axis=1)
    p[rows, top] += totals - p.sum(axis=1)
    p = np.maximum(p, 0.0)
    zero = totals == 0
    if zero.any():  # simplex_projection's total 0: all zeros, the least threshold giving them
        p[zero] = 0.0
        tau[zero] = np.maximum(x[zero].max(axis=1), 0.0)
    return p, tau


def apportion(p, total: int) -> np.ndarray:
    """Integers summing to ``total`` with every cell within 1 of ``p``
    (``p >= 0``, ``sum(p) = total``): floors, then the remaining units to the
    largest fractional parts (ties: the lower index)."""
    p = np.asarray(p, dtype=float)
    base = np.floor(p)
    short = int(total - base.sum())
    if short > 0:
        frac = p - base
        order = sorted(range(p.size), key=lambda i: (-frac[i], i))
        for i in order[:short]:
            base[i] += 1.0
    elif short < 0:  # floating residue only: remove from the largest cells
        order = sorted(range(p.size), key=lambda i: (-base[i], i))
        for i in order[:-short]:
            base[i] -= 1.0
    return base


def consistent_histogram(
    count, count_bound, count_beta, hist, hist_bound, hist_beta, round_answers=False, threshold_bound=False
):
    """The consistent pair for one release: ``(count, count_bound, hist,
    hist_bound, hist_beta)`` (module docstring: the projection and its
    bound; ``threshold_bound``: ``B_h + |tau|`` stated with ``beta_h``). A
    bound that is None (not stated) stays None."""
    c = _clamped(count, round_answers)
    p, tau = simplex_projection(hist, c)
    return _finish_pair(c, count_bound, count_beta, p, tau, hist_bound, hist_beta, round_answers, threshold_bound)


def _clamped(count, round_answers: bool) -> float:
    """The count a histogram is projected onto: clamped at 0 (rounded with ``round_answers``)."""
    c = max(float(count), 0.0)
    return float(round(c)) if round_answers else c


def _finish_pair(c, count_bound, count_beta, p, tau, hist_bound, hist_beta, round_answers, threshold_bound) -> tuple:
    """:func:`consistent_histogram` after the projection ``(p, tau)`` onto the clamped count ``c``."""
    cb = None if count_bound is None else float(count_bound)
    if round_answers:
        cb = None if cb is None else cb + 0.5
    extra = 0.0
    if round_answers:
        p = apportion(p, int(c))
        extra = 1.0
    if threshold_bound:
        hb = None if hist_bound is None else float(hist_bound) + abs(tau) + extra
        return c, cb, p, hb, float(hist_beta)
    hb = None if (hist_bound is None or cb is None) else max(2.0 * float(hist_bound), cb) + extra
    return c, cb, p, hb, float(hist_beta) + float(count_beta)


def own_total_histogram(hist, hist_bound, round_answers=False):
    """``(cells, bound)``: ``hist`` projected onto its own clamped total
    ``max(sum(hist), 0)`` (rounded and apportioned with ``round_answers``),
    with the threshold bound ``B_h + |tau|`` (+1 when rounded), valid with the
    histogram's own ``beta`` (module docstring). None stays None."""
    total = max(float(np.sum(np.asarray(hist, dtype=float))), 0.0)
    if round_answers:
        total = float(round(total))
    p, tau = simplex_projection(hist, total)
    extra = 0.0
    if round_answers:
        p = apportion(p, int(total))
        extra = 1.0
    return p, (None if hist_bound is None else float(hist_bound) + abs(tau) + extra)


@dataclasses.dataclass(frozen=True)
class Consistency:
    """Which histograms are made consistent with which count.

    pairs: ``(histogram query, count query)`` names; round_answers: release
    integers (the count rounded, cells apportioned); own_total: histogram
    names projected onto their own clamped total (no count); threshold_bound:
    the paired histograms state ``B_h + |tau|`` with ``beta_h`` instead of
    ``max(2 B_h, B_c)`` with ``beta_h + beta_c`` (module docstring; the own-total
    histograms always do)."""

    pairs: tuple = ()
    round_answers: bool = False
    own_total: tuple = ()
    threshold_bound: bool = False

    def __post_init__(self):
        hists = [h for h, _ in self.pairs]
        if len(set(hists)) != len(hists):
            raise ValueError("a histogram can be made consistent with one count only")
        counts = {c for _, c in self.pairs}
        if counts & set(hists):
            raise ValueError("a query cannot be both the count and a histogram of a consistency pair")
        own = list(self.own_total)
        if len(set(own)) != len(own) or set(own) & (counts | set(hists)):
            raise ValueError("an own-total histogram is named once and in no consistency pair")

    @classmethod
    def for_config(cls, config, round_answers: bool = False, threshold_bound: bool = False) -> Consistency:
        """Every histogram of ``config`` (a ``DynamicConfig``) with its only count
        query (stating the threshold bound with ``threshold_bound``); ValueError
        when there is no count query or more than one."""
        counts = [q.name for q in config.queries if q.kind == "count"]
        hists = [q.name for q in config.queries if q.kind == "histogram"]
        if len(counts) != 1:
            raise ValueError(
                f"a consistent histogram needs exactly one count query to be consistent with; "
                f"the configuration has {len(counts)}"
            )
        if not hists:
            raise ValueError("a consistent histogram needs a histogram query; the configuration has none")
        return cls(tuple((h, counts[0]) for h in hists), bool(round_answers), threshold_bound=bool(threshold_bound))

    @classmethod
    def default_for(cls, config, round_answers: bool = False) -> Consistency:
        """The projection chosen by the measurements (``docs/consistency.md``, "The default"): every
        histogram of ``config`` projected onto the cells >= 0 summing to THE count when the
        configuration has exactly one count query, else onto its own clamped total; stated with the
        threshold bound ``B_h + |tau|`` and ``beta_h``. Empty (off) without a histogram."""
        counts = [q.name for q in config.queries if q.kind == "count"]
        hists = tuple(q.name for q in config.queries if q.kind == "histogram")
        if not hists:
            return cls()
        if len(counts) == 1:
            return cls(tuple((h, counts[0]) for h in hists), bool(round_answers), threshold_bound=True)
        return cls((), bool(round_answers), own_total=hists, threshold_bound=True)

    def __bool__(self) -> bool:
        return bool(self.pairs) or bool(self.own_total)


def make_consistent(answers: Iterable, consistency: Consistency) -> list:
    """``answers`` (``Answer`` or ``ReleaseRecord``: anything with ``stream``,
    ``tick``, ``query``, ``estimate``, ``error_bound``, ``beta`` fields that
    ``dataclasses.replace`` or ``_replace`` can change) with every paired
    histogram projected and its count clamped (and rounded), and every
    own-total histogram projected onto its own total, in the same order."""
    answers = list(answers)
    if not consistency:
        return answers
    by_key = {(a.stream, a.tick, a.query): i for i, a in enumerate(answers)}
    out = list(answers)
    jobs = []  # (histogram index, count index), in the order the pairs were always made consistent
    for h_name, c_name in consistency.pairs:
        for i, a in enumerate(answers):
            if a.query != h_name:
                continue
            j = by_key.get((a.stream, a.tick, c_name))
            if j is not None:
                jobs.append((i, j))
    counts_done = set()
    for (i, j), (cv, cb, p, hb, hbeta) in zip(jobs, _consistent_pairs(answers, jobs, consistency)):
        a, c = answers[i], answers[j]
        out[i] = _replace(a, estimate=_like(a.estimate, p), error_bound=hb, beta=hbeta)
        if j not in counts_done:
            out[j] = _replace(c, estimate=_like(c.estimate, [cv]), error_bound=cb)
            counts_done.add(j)
    own = set(consistency.own_total)
    for i, a in enumerate(answers):
        if a.query in own:
            p, hb = own_total_histogram(a.estimate, a.error_bound, consistency.round_answers)
            out[i] = _replace(a, estimate=_like(a.estimate, p), error_bound=hb)
    return out


def _consistent_pairs(answers: list, jobs: list, consistency: Consistency) -> list:
    """:func:`consistent_histogram` of every (histogram, count) pair of ``jobs``, the projections of histograms of
    one length computed at once (:func:`simplex_projection_rows`); the rest of each pair as it computes it."""
    out: list = [None] * len(jobs)
    by_length: dict[int, list] = {}
    for k, (i, j) in enumerate(jobs):
        hist = np.asarray(answers[i].estimate, dtype=float)
        if hist.ndim != 1 or hist.size == 0 or len(jobs) == 1:  # one pair (a streaming firing): as it was
            out[k] = _one_pair(answers[i], answers[j], consistency)
        else:
            by_length.setdefault(hist.size, []).append((k, hist))
    for group in by_length.values():
        counts = []
        for k, _ in group:
            i, j = jobs[k]
            counts.append(_clamped(np.asarray(answers[j].estimate, dtype=float)[0], consistency.round_answers))
        ps, taus = simplex_projection_rows(np.stack([h for _, h in group]), np.array(counts))
        rounded, threshold = consistency.round_answers, consistency.threshold_bound
        for (k, _), c, p, tau in zip(group, counts, ps, taus.tolist()):
            a, n = answers[jobs[k][0]], answers[jobs[k][1]]
            out[k] = _finish_pair(c, n.error_bound, n.beta, p, tau, a.error_bound, a.beta, rounded, threshold)
    return out


def _one_pair(a, c, consistency: Consistency) -> tuple:
    return consistent_histogram(
        np.asarray(c.estimate, dtype=float)[0],
        c.error_bound,
        c.beta,
        a.estimate,
        a.error_bound,
        a.beta,
        consistency.round_answers,
        consistency.threshold_bound,
    )


def _like(template, values):
    if isinstance(template, np.ndarray):
        return np.asarray(values, dtype=float)
    return tuple(float(v) for v in values)


_FAST_FIELDS = frozenset(("estimate", "error_bound", "beta"))


def _replace(obj, **kw):
    if type(obj) is Answer and kw.keys() <= _FAST_FIELDS:
        # dataclasses.replace written out (a plain dataclass: its __init__ only sets the fields), 5x cheaper
        return Answer(
            obj.stream,
            obj.tick,
            obj.segment,
            obj.query,
            kw.get("estimate", obj.estimate),
            kw.get("error_bound", obj.error_bound),
            kw.get("beta", obj.beta),
            obj.spent,
        )
    if dataclasses.is_dataclass(obj):
        return dataclasses.replace(obj, **kw)
    return obj._replace(**kw)
