"""Sensitivity by contribution: the noise multiplier of one counter of ``net_change`` for an
entry or a person unit, instead of group privacy (issue 28, item 3; proofs and the integration
recipe: ``docs/contribution.md``).

``net_change`` feeds each additive query set's counter the signed change of every period. At
update level the counter is calibrated to one change of one item (its update-level sensitivity
``Delta_u``: L2 ``sqrt(n2) l2`` through a lattice Toeplitz matrix, L1 ``h l1`` through a tree of
``h`` levels). :func:`contribution_sensitivity` bounds what one entry / one person can do to the
same releases, ``Delta <= m Delta_u``; calibrating the counter with its budget share scaled by
:func:`calibrated_budget` (``rho / m^2``, ``eps / m``) then gives the configured guarantee for the
unit, directly. :func:`group_noise_multiplier` is what group privacy costs instead, for
comparison.

Supported: Gaussian noise through ``sqrt_factorization``, ``blt`` and ``anytime_sqrt`` (the last two
unbounded: ``sqrt(#changes)`` by Lemma A1, a supremum for ``anytime_sqrt``); Laplace noise through the
interval-release counters (``kary_tree``, ``binary_tree``, ``honaker``, ``infinite``,
``infinite_honaker``, ``naive_increments``). Anything else raises :class:`UnsupportedCounter`
(the caller keeps group privacy and says so in its plan).

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from transforms.core.config import QuerySet
from transforms.core.contribution.toeplitz import (
    DEFAULT_RTOL,
    alternating_bound,
    histogram_bound,
    layer_cake_bound,
    toeplitz_model,
)
from transforms.core.contribution.trees import change_costs, change_mass, kary_top_nodes
from transforms.core.contribution.units import ContributionUnit
from transforms.core.counters.factorization import kary_radices
from transforms.core.foundation.accounting import ZCDP, ApproxDP, Budget, PureDP, TightGaussian, rho_for_approx

__all__ = [
    "GAUSSIAN_COUNTERS",
    "INTERVAL_COUNTERS",
    "UnsupportedCounter",
    "Sensitivity",
    "query_columns",
    "contribution_sensitivity",
    "noise_multiplier",
    "calibrated_budget",
    "group_update_budget",
    "group_noise_multiplier",
]

GAUSSIAN_COUNTERS = ("sqrt_factorization", "blt", "anytime_sqrt")
UNBOUNDED_GAUSSIAN = ("blt", "anytime_sqrt")  # the same counter whatever the horizon: no change is cut by it
INTERVAL_COUNTERS = ("kary_tree", "binary_tree", "honaker", "infinite", "infinite_honaker", "naive_increments")
KINDS = ("count", "histogram", "linear")


class UnsupportedCounter(ValueError):
    """No sensitivity by contribution for this (counter, noise): keep group privacy."""


@dataclass(frozen=True)
class Sensitivity:
    """What one unit can do to one counter, against one update.

    Attributes:
      kind, counter, noise: the query kind, the counter, ``gaussian`` or ``laplace``.
      unit: the :class:`ContributionUnit`.
      norm: ``l2`` (Gaussian) or ``l1`` (Laplace).
      update_level: ``Delta_u``, in the counter's noise units (lattice units): ``sqrt(n2) l2``,
        or ``h l1`` for a k-ary tree of ``h`` levels (``l1`` per level for the other trees).
      bound: ``Delta``, an upper bound on the unit's change, same units.
      multiplier: ``m >= bound / update_level`` (rounded up): the noise scale factor.
      exact: ``bound`` is attained by a pattern (up to the ``rtol`` of the certified search).
      group_size: ``g``, the updates the unit accounts for under group privacy.
      entries: the most entries one unit brings (1 but for a person).
      pattern: one entry's lifecycle attaining (or approaching) the entry-level bound:
        ``((period, op, item), ...)``, periods 0-based, ``item`` a domain index (None: delete).
      method: a one-line account, for plans and manifests.
    """

    kind: str
    counter: str
    noise: str
    unit: ContributionUnit
    norm: str
    update_level: float
    bound: float
    multiplier: float
    exact: bool
    group_size: int
    entries: int
    pattern: tuple
    method: str


def query_columns(query: QuerySet) -> np.ndarray:
    """The integer answer vector (lattice units of its mechanism) of every item of ``query``:
    an ``m x d`` array, what one insertion of item ``x`` adds to the counter's input."""
    if query.kind not in KINDS:
        raise ValueError(f"sensitivity by contribution covers additive query sets {KINDS}, not {query.kind!r}")
    mech = query.mechanism("laplace")  # the answers do not depend on the noise kind
    d = mech.domain_size
    cols = []
    for x in range(d):
        hist = np.zeros(d, dtype=np.int64)
        hist[x] = 1
        cols.append(np.rint(np.asarray(mech.exact(hist), dtype=np.float64) / mech.unit))
    return np.asarray(cols, dtype=np.int64).T


def _up(x: Fraction) -> float:
    """The least float >= x (x >= 0)."""
    f = float(x)
    while Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def _sqrt_ratio_up(num: int, den: int) -> float:
    """A float >= sqrt(num / den), ints."""
    q = Fraction(num, den)
    f = math.sqrt(float(q))
    while Fraction(f) * Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    return f


def _lifecycle(kind: str, cols: np.ndarray, positions, ops_hint: str) -> tuple:
    """An entry's lifecycle at ``positions``: a count alternates insert / delete; a histogram
    inserts cell 0 and moves to cells 1, 2, ...; a one-row sum inserts its largest value and
    moves between its smallest and largest."""
    out = []
    d = cols.shape[1]
    if kind == "count" or ops_hint == "alive":
        for i, p in enumerate(positions):
            out.append((int(p), "insert" if i % 2 == 0 else "delete", 0 if i % 2 == 0 else None))
        return tuple(out)
    if kind == "histogram":
        for i, p in enumerate(positions):
            out.append((int(p), "insert" if i == 0 else "upsert", i % d))
        return tuple(out)
    hi, lo = int(np.argmax(cols[0])), int(np.argmin(cols[0]))
    for i, p in enumerate(positions):
        out.append((int(p), "insert" if i == 0 else "upsert", hi if i % 2 == 0 else lo))
    return tuple(out)


def contribution_sensitivity(
    query: QuerySet,
    counter: str,
    noise: str,
    unit: ContributionUnit,
    *,
    horizon: int | None = None,
    end_tick: int | None = None,
    radices: tuple[int, ...] | None = None,
    rtol: float = DEFAULT_RTOL,
) -> Sensitivity:
    """The sensitivity of ``counter`` (``noise``: ``gaussian`` / ``laplace``) over ``horizon``
    periods (the BLT: its design horizon, None for the default; ``anytime_sqrt``: ignored) to what
    ``unit`` can contribute to ``query``'s change stream. ``end_tick``: the release's last tick (a per-window person
    limit needs it); ``radices``: the k-ary tree's, if not the default for the horizon."""
    cols = query_columns(query)
    kind = query.kind
    entries = unit.entries(end_tick)
    g = unit.group_size(end_tick)
    k, alive = unit.mutations, unit.alive_toggles
    single_row_zero = cols.shape[0] == 1 and int(cols.min()) == 0 and int(cols.max()) > 0
    if noise == "gaussian":
        if counter not in GAUSSIAN_COUNTERS:
            raise UnsupportedCounter(f"no L2 sensitivity by contribution through {counter!r}: group privacy")
        model = toeplitz_model(counter, horizon)
        l2sq = change_costs(cols, "l2sq")[0]
        base = model.n2 * l2sq
        update_level = math.sqrt(base)
        if unit.kind == "update":
            m_entry, exact, pattern = 1.0, True, ()
        elif kind == "count" or (kind == "histogram" and cols.shape[1] == 1):
            d2, exact, pos = alternating_bound(model, alive, rtol)
            m_entry = _sqrt_ratio_up(d2, base)
            pattern = _lifecycle("count", cols, pos, "alive") if exact else ()
        elif kind == "histogram":
            d2, exact, pos = histogram_bound(model, k, cols.shape[1], alive, rtol)
            m_entry = _sqrt_ratio_up(d2, base)
            pattern = _lifecycle("histogram", cols, pos, "") if exact else ()
        else:
            delta, exact = layer_cake_bound(model, cols, k, alive, rtol)
            m_entry = delta / math.sqrt(base) * (1 + 1e-12)
            pattern = ()
            if exact and single_row_zero:
                pos = alternating_bound(model, k, rtol)[2]
                pattern = _lifecycle("linear", cols, pos, "")
        norm = "l2"
        where = f"{counter}(T={model.horizon})" if model.horizon is not None else f"{counter}(unbounded)"
    elif noise == "laplace":
        if counter not in INTERVAL_COUNTERS:
            raise UnsupportedCounter(f"no L1 sensitivity by contribution through {counter!r}: group privacy")
        l1 = change_costs(cols, "l1")[0]
        levels, top = 1, None
        if counter == "kary_tree":
            if not horizon:
                raise ValueError("kary_tree needs a horizon")
            rad = tuple(radices) if radices is not None else kary_radices(int(horizon), 2)
            levels = len(rad) + 1
            top = kary_top_nodes(int(horizon), rad)
        update_level = float(levels * l1)
        if unit.kind == "update":
            m_entry, exact, pattern = 1.0, True, ()
        else:
            cm, changes = change_mass(cols, k, unit.lifetimes)
            m_entry = _up(Fraction(cm, l1))
            attainable = kind in ("count", "histogram") or single_row_zero
            exact = top is not None and top[0] >= changes and attainable
            pattern = ()
            if exact:
                pos = [i * top[1] for i in range(changes)]
                hint = "alive" if kind == "count" or cols.shape[1] == 1 else ""
                pattern = _lifecycle(kind, cols, pos, hint)
        norm = "l1"
        plural = "level" if levels == 1 else "levels"
        where = f"{counter}(T={horizon}, {levels} {plural})" if counter == "kary_tree" else counter
    else:
        raise ValueError(f"noise must be gaussian or laplace, got {noise!r}")
    if horizon and counter not in UNBOUNDED_GAUSSIAN:  # a change at or past the horizon never happens
        pattern = tuple(x for x in pattern if x[0] < int(horizon))
    multiplier = m_entry if entries == 1 else _up(Fraction(m_entry) * entries)
    exact = exact and (unit.kind != "person" or unit.entries_window is None)
    method = (
        f"{unit.describe()}: {kind} {norm.upper()} through {where} <= {multiplier:.4g} x one update"
        f" ({'exact' if exact else 'upper bound'}); group privacy: {g} updates"
    )
    return Sensitivity(
        kind,
        counter,
        noise,
        unit,
        norm,
        update_level,
        update_level * multiplier,
        multiplier,
        exact,
        g,
        entries,
        pattern,
        method,
    )


def noise_multiplier(
    query: QuerySet,
    counter: str,
    noise: str,
    unit: ContributionUnit,
    *,
    horizon: int | None = None,
    end_tick: int | None = None,
    radices: tuple[int, ...] | None = None,
) -> float:
    """``m``: calibrate the counter with :func:`calibrated_budget` ``(share, m, noise)``."""
    s = contribution_sensitivity(query, counter, noise, unit, horizon=horizon, end_tick=end_tick, radices=radices)
    return s.multiplier


def calibrated_budget(share: Budget, multiplier: float, noise: str) -> Budget:
    """The update-level budget to build a counter with so that a unit whose change is at most
    ``multiplier`` updates' gets ``share``: Gaussian ``ZCDP(rho / m^2)`` (an (eps, delta) share
    goes through ``rho_for_approx`` first, as ``DynamicConfig.ledger_budget`` does; a share of a
    tight Gaussian account stays one, ``TightGaussian(rho / m^2)``: ``docs/accounting.md``), Laplace
    ``eps / m``. Rounded down (never more budget than the proof allows)."""
    m = float(multiplier)
    if not m >= 1.0:
        raise ValueError(f"a noise multiplier is >= 1, got {multiplier!r}")
    if m == 1.0 and (noise == "laplace" or isinstance(share, ZCDP)):
        return share  # the update level, unchanged: the same floats as today
    shrink = 1 - 1e-15
    if noise == "gaussian" and isinstance(share, TightGaussian):  # a tight Gaussian account keeps its type
        return TightGaussian(share.rho / (m * m) * shrink)
    if noise == "gaussian":
        rho = share.rho if isinstance(share, ZCDP) else rho_for_approx(share)
        return ZCDP(rho / (m * m) * shrink)
    if isinstance(share, PureDP):
        return PureDP(share.epsilon / m * shrink)
    if isinstance(share, ApproxDP):
        return ApproxDP(share.epsilon / m * shrink, share.delta)
    raise ValueError("Laplace noise needs an epsilon budget")


def group_update_budget(target: Budget, g: int) -> Budget:
    """The update-level budget whose group guarantee over ``g`` updates is ``target`` (the
    formula of ``PrivacyUnit.update_level_budget``, for any ``g``)."""
    g = int(g)
    if g == 1:
        return target
    if isinstance(target, ZCDP):
        return ZCDP(target.rho / (g * g))
    if isinstance(target, PureDP):
        return PureDP(target.epsilon / g)
    e = target.epsilon / g
    return ApproxDP(e, target.delta / (g * math.exp((g - 1) * e)))


def group_noise_multiplier(target: Budget, g: int, noise: str) -> float:
    """The noise scale of group privacy over ``g`` updates, against update level, at ``target``:
    ``g`` for Laplace noise and zCDP budgets; for an (eps, delta) target with Gaussian noise
    ``sqrt(rho(target) / rho(group budget))`` (the CKS conversion both sides, as the counters
    calibrate)."""
    if noise == "laplace" or isinstance(target, (ZCDP, PureDP)):
        return float(g)
    return math.sqrt(rho_for_approx(target) / rho_for_approx(group_update_budget(target, g)))
