"""Privacy budgets, conversions, composition, series splits and the release ledger.

Budgets are immutable values (``PureDP``, ``ApproxDP``, ``ZCDP``). A
:class:`Ledger` is configured with a total budget and records every release
(its cost and coordinates) in a tree of composition scopes: the cost of a
sequential scope is the sum of its children's, the cost of a parallel scope (its
members see disjoint data) is the maximum. A charge that would take the root
over the configured total raises :class:`BudgetExceededError` *before* the caller
draws any noise, and leaves the ledger unchanged.

Privacy units (neighbouring relations):

* ``PrivacyUnit.update()``: the seeds' relation. Two update streams are
  neighbours if one has one more update (insertion or deletion of one item).
* ``PrivacyUnit.entry(k)``: two streams are neighbours if they differ in all
  updates of one entry (record id) that is mutated at most ``k`` times
  (insert, upsert/modify and delete each count as one mutation). A modify is a
  delete of the old item plus an insert of the new one, so one entry accounts
  for at most ``g = 2k - 1`` updates; group privacy turns an update-level
  guarantee into an entry-level one: pure ``g*eps``; approximate
  ``(g*eps, g*exp((g-1)*eps)*delta)``; zCDP ``g**2 * rho``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Union

__all__ = [
    "PureDP",
    "ApproxDP",
    "ZCDP",
    "Budget",
    "BudgetExceededError",
    "zcdp_to_approx",
    "zcdp_delta_for_epsilon",
    "to_approx",
    "compose_sequential",
    "compose_parallel",
    "SeriesSplit",
    "zeta",
    "PrivacyUnit",
    "Ledger",
    "Scope",
    "Record",
    "as_vector",
]

_TOL = 1e-12  # relative float tolerance when comparing a spend with a budget


def _check_nonneg(name: str, value: float, allow_zero: bool = True) -> None:
    if not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value}")


@dataclass(frozen=True)
class PureDP:
    """eps-differential privacy."""

    epsilon: float

    def __post_init__(self):
        _check_nonneg("epsilon", self.epsilon)

    def __add__(self, other):
        return compose_sequential([self, other])

    def scale(self, w: float) -> PureDP:
        return PureDP(self.epsilon * w)

    @property
    def is_zero(self) -> bool:
        return self.epsilon == 0


@dataclass(frozen=True)
class ApproxDP:
    """(eps, delta)-differential privacy."""

    epsilon: float
    delta: float

    def __post_init__(self):
        _check_nonneg("epsilon", self.epsilon)
        _check_nonneg("delta", self.delta)
        if self.delta >= 1:
            raise ValueError(f"delta must be < 1, got {self.delta}")

    def __add__(self, other):
        return compose_sequential([self, other])

    def scale(self, w: float) -> ApproxDP:
        return ApproxDP(self.epsilon * w, self.delta * w)

    @property
    def is_zero(self) -> bool:
        return self.epsilon == 0 and self.delta == 0


@dataclass(frozen=True)
class ZCDP:
    """rho-zero-concentrated differential privacy (Bun-Steinke 2016)."""

    rho: float

    def __post_init__(self):
        _check_nonneg("rho", self.rho)

    def __add__(self, other):
        return compose_sequential([self, other])

    def scale(self, w: float) -> ZCDP:
        return ZCDP(self.rho * w)

    @property
    def is_zero(self) -> bool:
        return self.rho == 0


Budget = Union[PureDP, ApproxDP, ZCDP]


class BudgetExceededError(RuntimeError):
    """A release was refused because it would exceed the configured budget."""


# ---------------------------------------------------------------------------
# Conversions
# ---------------------------------------------------------------------------


def _cks_epsilon(rho: float, delta: float, alpha: float) -> float:
    # Canonne-Kamath-Steinke 2020, Prop. 12 / Cor. 13: rho-zCDP implies
    # (eps, delta)-DP with eps = alpha*rho + (log(1/delta) + (alpha-1) log(1-1/alpha)
    #                               - log(alpha)) / (alpha - 1), for every alpha > 1.
    return alpha * rho + (math.log(1 / delta) + (alpha - 1) * math.log1p(-1 / alpha) - math.log(alpha)) / (alpha - 1)


def zcdp_to_approx(rho: float, delta: float) -> ApproxDP:
    """The tight conversion of rho-zCDP to (eps, delta)-DP (CKS 2020, Cor. 13).

    Every alpha > 1 gives a valid eps; we minimise over alpha numerically
    (golden-section search on a convex function in log-alpha), so an imprecise
    minimiser only loses tightness, never validity. The result is never worse
    than the classic ``rho + 2 sqrt(rho log(1/delta))``.
    """
    _check_nonneg("rho", rho)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1) for a zCDP conversion, got {delta}")
    if rho == 0:
        return ApproxDP(0.0, delta)
    classic = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    lo, hi = math.log(1 + 1e-9), math.log(1e7 / min(1.0, rho) + 10)
    g = (math.sqrt(5) - 1) / 2
    f = lambda la: _cks_epsilon(rho, delta, math.exp(la))  # noqa: E731
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(200):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = f(b)
    eps = min(fa, fb, classic)
    return ApproxDP(max(eps, 0.0), delta)


def zcdp_delta_for_epsilon(rho: float, epsilon: float) -> float:
    """The smallest delta (by the same CKS bound) with rho-zCDP => (eps, delta)-DP."""
    lo, hi = 1e-300, 1 - 1e-15
    if zcdp_to_approx(rho, hi).epsilon > epsilon:
        return 1.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if zcdp_to_approx(rho, mid).epsilon <= epsilon:
            hi = mid
        else:
            lo = mid
    return hi


def to_approx(b: Budget, delta: float | None = None) -> ApproxDP:
    """Express any budget as (eps, delta); zCDP needs the target ``delta``."""
    if isinstance(b, PureDP):
        return ApproxDP(b.epsilon, 0.0)
    if isinstance(b, ApproxDP):
        return b
    if delta is None:
        raise ValueError("converting zCDP to (eps, delta) needs a target delta")
    return zcdp_to_approx(b.rho, delta)


def _as_zcdp(b: Budget) -> ZCDP:
    if isinstance(b, ZCDP):
        return b
    if isinstance(b, PureDP):
        return ZCDP(b.epsilon**2 / 2)  # eps-DP implies (eps^2/2)-zCDP (Bun-Steinke Prop. 1.4)
    if b.delta == 0:
        return ZCDP(b.epsilon**2 / 2)
    raise ValueError("an (eps, delta>0) cost cannot be expressed in zCDP; use an ApproxDP ledger")


def _to_currency(b: Budget, like: Budget) -> Budget:
    """Express ``b`` in the currency of ``like`` (the ledger's budget type)."""
    if isinstance(like, ZCDP):
        return _as_zcdp(b)
    if isinstance(like, ApproxDP):
        if isinstance(b, ZCDP):
            raise ValueError("a zCDP cost cannot be charged to an (eps, delta) ledger directly")
        return to_approx(b)
    if isinstance(b, PureDP):
        return b
    if isinstance(b, ApproxDP) and b.delta == 0:
        return PureDP(b.epsilon)
    raise ValueError(f"a {type(b).__name__} cost cannot be charged to a pure-DP ledger")


def compose_sequential(budgets) -> Budget:
    """Basic sequential composition (sum) in the most general type present.

    zCDP composes additively in rho; pure and approximate DP add eps and delta.
    Mixing zCDP with (eps, delta>0) raises ``ValueError``.
    """
    budgets = list(budgets)
    if not budgets:
        return PureDP(0.0)
    if any(isinstance(b, ZCDP) for b in budgets):
        return ZCDP(math.fsum(_as_zcdp(b).rho for b in budgets))
    if any(isinstance(b, ApproxDP) for b in budgets):
        ab = [to_approx(b) for b in budgets]
        return ApproxDP(math.fsum(b.epsilon for b in ab), math.fsum(b.delta for b in ab))
    return PureDP(math.fsum(b.epsilon for b in budgets))


def compose_parallel(budgets) -> Budget:
    """Parallel composition over disjoint data: the componentwise maximum."""
    budgets = list(budgets)
    if not budgets:
        return PureDP(0.0)
    if any(isinstance(b, ZCDP) for b in budgets):
        return ZCDP(max(_as_zcdp(b).rho for b in budgets))
    if any(isinstance(b, ApproxDP) for b in budgets):
        ab = [to_approx(b) for b in budgets]
        return ApproxDP(max(b.epsilon for b in ab), max(b.delta for b in ab))
    return PureDP(max(b.epsilon for b in budgets))


# ---------------------------------------------------------------------------
# Infinite series splits
# ---------------------------------------------------------------------------


def zeta(s: float) -> float:
    """The Riemann zeta function at real s > 1 (Euler-Maclaurin, |error| < 1e-12)."""
    if s <= 1:
        raise ValueError("zeta(s) needs s > 1")
    n = 20
    total = math.fsum(k ** (-s) for k in range(1, n))
    # tail sum_{k>=n} k^-s by Euler-Maclaurin with three correction terms
    total += n ** (1 - s) / (s - 1) + 0.5 * n ** (-s)
    total += s * n ** (-s - 1) / 12
    total -= s * (s + 1) * (s + 2) * n ** (-s - 3) / 720
    total += s * (s + 1) * (s + 2) * (s + 3) * (s + 4) * n ** (-s - 5) / 30240
    return total


@dataclass(frozen=True)
class SeriesSplit:
    """A split of one budget over infinitely many uses j = 1, 2, ...

    * ``kind="pi2"``: weight 6 / (pi^2 j^2) (the seeds' split).
    * ``kind="zeta"``: weight 1 / (zeta(1+eta) j^(1+eta)), tighter for small eta
      at large j, looser at small j.
    * ``kind="finite"``: weight 1/horizon for j <= horizon, and a request
      for j > horizon raises (a declared horizon).

    The weights sum to at most 1 over all j, so charging ``w(j) * budget`` to use
    j is within ``budget`` however many uses there are.
    """

    kind: str = "pi2"
    eta: float = 1.0
    horizon: int = 0

    def __post_init__(self):
        if self.kind not in ("pi2", "zeta", "finite"):
            raise ValueError(f"series split kind must be one of pi2, zeta, finite; got {self.kind!r}")
        if self.kind == "zeta" and not self.eta > 0:
            raise ValueError(f"zeta split needs eta > 0, got {self.eta}")
        if self.kind == "finite" and self.horizon < 1:
            raise ValueError(f"finite split needs horizon >= 1, got {self.horizon}")

    def weight(self, j: int) -> float:
        if j < 1:
            raise ValueError(f"series index starts at 1, got {j}")
        if self.kind == "pi2":
            return 6.0 / (math.pi**2 * j * j)
        if self.kind == "zeta":
            return 1.0 / (zeta(1 + self.eta) * j ** (1 + self.eta))
        if j > self.horizon:
            raise BudgetExceededError(f"use {j} is beyond the declared horizon {self.horizon}; raise the horizon")
        return 1.0 / self.horizon

    def partial_sum(self, n: int) -> float:
        return math.fsum(self.weight(j) for j in range(1, n + 1))


# ---------------------------------------------------------------------------
# Privacy unit
# ---------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class PrivacyUnit:
    """The neighbouring relation a guarantee is stated for (see module docstring).

    ``mutation_window`` (entry unit only): every mutation of an entry lies
    within this many ticks after the tick of its first insertion (Pan's
    B-time-bounded constraint, enforced by the registry); with it,
    ``max_mutations`` may be None (no limit on the number). Group privacy needs
    ``max_mutations``; the changelog mechanisms (``dcr``, ``hdcr``, ``swcr``)
    account for either constraint (``docs/changelog.md``).
    """

    kind: str = "update"
    max_mutations: int | None = 1
    mutation_window: int | None = None

    def __post_init__(self):
        if self.kind not in ("update", "entry"):
            raise ValueError(f"privacy unit must be 'update' or 'entry', got {self.kind!r}")
        if self.mutation_window is not None:
            w = self.mutation_window
            if self.kind != "entry":
                raise ValueError("mutation_window is an entry-level constraint (unit entry)")
            if isinstance(w, bool) or not isinstance(w, int) or w < 0:
                raise ValueError(f"mutation_window must be an integer >= 0 (ticks), got {w!r}")
        if self.max_mutations is None:
            if self.mutation_window is None:
                raise ValueError("an entry unit needs max_mutations_per_entry or mutation_window")
        elif self.max_mutations < 1:
            raise ValueError(f"max_mutations_per_entry must be >= 1, got {self.max_mutations}")

    def __repr__(self) -> str:  # the repr (digests) of a unit without a window is unchanged
        tail = "" if self.mutation_window is None else f", mutation_window={self.mutation_window!r}"
        return f"PrivacyUnit(kind={self.kind!r}, max_mutations={self.max_mutations!r}{tail})"

    @classmethod
    def update(cls) -> PrivacyUnit:
        return cls("update", 1)

    @classmethod
    def entry(cls, max_mutations: int | None, mutation_window: int | None = None) -> PrivacyUnit:
        return cls("entry", max_mutations, mutation_window)

    @property
    def group_size(self) -> int:
        """How many updates one privacy unit can account for."""
        if self.kind == "update":
            return 1
        if self.max_mutations is None:
            raise ValueError(
                "group privacy needs max_mutations_per_entry; a time-bounded unit alone (mutation_window) is "
                "accounted only by the changelog mechanisms (dcr, hdcr, swcr)"
            )
        return 2 * self.max_mutations - 1

    def guarantee(self, update_level: Budget) -> Budget:
        """The guarantee for this unit given the update-level guarantee."""
        g = self.group_size
        if g == 1:
            return update_level
        if isinstance(update_level, ZCDP):
            return ZCDP(g * g * update_level.rho)
        if isinstance(update_level, PureDP):
            return PureDP(g * update_level.epsilon)
        e, d = update_level.epsilon, update_level.delta
        return ApproxDP(g * e, min(g * math.exp((g - 1) * e) * d, 1 - 1e-16))

    def update_level_budget(self, target: Budget) -> Budget:
        """The update-level budget whose group guarantee is within ``target``."""
        g = self.group_size
        if g == 1:
            return target
        if isinstance(target, ZCDP):
            return ZCDP(target.rho / (g * g))
        if isinstance(target, PureDP):
            return PureDP(target.epsilon / g)
        e = target.epsilon / g
        return ApproxDP(e, target.delta / (g * math.exp((g - 1) * e)))


# ---------------------------------------------------------------------------
# Ledger
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    """One release: where it is (coordinates) and what it cost."""

    coordinates: tuple[Any, ...]
    cost: Budget
    scope: tuple[str, ...]


def as_vector(b: Budget) -> tuple[float, ...]:
    """A budget as the tuple of its numbers: ``(eps,)``, ``(eps, delta)`` or ``(rho,)``."""
    if isinstance(b, ApproxDP):
        return (b.epsilon, b.delta)
    if isinstance(b, ZCDP):
        return (b.rho,)
    return (b.epsilon,)


def _unvec(v: tuple[float, ...], like: Budget) -> Budget:
    if isinstance(like, ApproxDP):
        return ApproxDP(v[0], v[1])
    if isinstance(like, ZCDP):
        return ZCDP(v[0])
    return PureDP(v[0])


class Scope:
    """A composition scope of a :class:`Ledger`.

    ``kind="sequential"``: children compose by summation; ``kind="parallel"``:
    children run on disjoint data and compose by maximum. Leaf charges are
    one-shot members of their scope. A child scope that will not be charged
    again can be :meth:`close`-d: its total stays folded into its parent's and
    its bookkeeping is freed (long-running streams must not keep every node).
    Totals are kept as float vectors in the ledger's currency.
    """

    SEQUENTIAL = "sequential"
    PARALLEL = "parallel"

    def __init__(self, ledger: Ledger, name: str, kind: str, parent: Scope | None):
        if kind not in (self.SEQUENTIAL, self.PARALLEL):
            raise ValueError(f"scope kind must be sequential or parallel, got {kind!r}")
        self.ledger = ledger
        self.name = name
        self.kind = kind
        self.parent = parent
        self._total: tuple[float, ...] = tuple(0.0 for _ in as_vector(ledger.budget))
        self.children: dict[str, Scope] = {}
        self.closed = False

    @property
    def total(self) -> Budget:
        return _unvec(self._total, self.ledger.budget)

    @property
    def path(self) -> tuple[str, ...]:
        return (self.parent.path if self.parent else ()) + ((self.name,) if self.parent else ())

    def child(self, name: str, kind: str = "sequential") -> Scope:
        """The child scope ``name`` (created on first use)."""
        if self.closed:
            raise RuntimeError(f"scope {self.path} is closed")
        c = self.children.get(name)
        if c is None:
            c = Scope(self.ledger, str(name), kind, self)
            self.children[name] = c
        elif c.kind != kind:
            raise ValueError(f"scope {c.path} exists as {c.kind}, asked for {kind}")
        return c

    def _propagated(self, cost: tuple[float, ...]) -> list[tuple[Scope, tuple[float, ...]]]:
        """New totals of this scope and its ancestors after adding a member of ``cost``."""
        out = []
        scope = self
        old = tuple(0.0 for _ in cost)
        new = cost
        while scope is not None:
            cur = scope._total
            if scope.kind == Scope.SEQUENTIAL:
                nxt = tuple(c + (n - o) for c, n, o in zip(cur, new, old))
            else:
                nxt = tuple(max(c, n) for c, n in zip(cur, new))
            out.append((scope, nxt))
            if nxt == cur:
                break  # nothing changes further up
            old, new = cur, nxt
            scope = scope.parent
        return out

    def would_spend(self, cost: Budget) -> Budget:
        """The ledger's total if ``cost`` were charged here as a new member."""
        updates = self._propagated(as_vector(_to_currency(cost, self.ledger.budget)))
        root = self.ledger.root
        total = {id(s): t for s, t in updates}.get(id(root), root._total)
        return _unvec(total, self.ledger.budget)

    def charge(self, cost: Budget, coordinates: tuple[Any, ...] = ()) -> None:
        """Record a release of ``cost``; raise before anything changes if the
        configured budget would be exceeded."""
        if self.closed:
            raise RuntimeError(f"scope {self.path} is closed")
        cost = _to_currency(cost, self.ledger.budget)
        updates = self._propagated(as_vector(cost))
        last_scope, last_total = updates[-1]
        if last_scope is self.ledger.root:
            cap = self.ledger._cap
            if any(x > c * (1 + _TOL) + 1e-300 for x, c in zip(last_total, cap)):
                raise BudgetExceededError(
                    f"release at {tuple(coordinates)} costing {cost} would bring the total to "
                    f"{_unvec(last_total, self.ledger.budget)}, over the configured budget {self.ledger.budget}"
                )
        for scope, total in updates:
            scope._total = total
        self.ledger._record(Record(tuple(coordinates), cost, self.path) if self.ledger.keep_records else None)

    def close(self) -> None:
        """Free the bookkeeping of this scope; its spend stays counted."""
        self.closed = True
        self.children.clear()
        if self.parent is not None:
            self.parent.children.pop(self.name, None)


class Ledger:
    """Records every release and refuses the one that would exceed the budget.

    Args:
      budget: the configured total (its type is the ledger's currency: pure
        costs are converted to zCDP as eps^2/2 in a zCDP ledger).
      keep_records: keep a list of every :class:`Record` (tests, audits). The
        number of releases and the spend are always kept.
    """

    def __init__(self, budget: Budget, keep_records: bool = True):
        if isinstance(budget, (PureDP, ApproxDP, ZCDP)) is False:
            raise TypeError("ledger budget must be PureDP, ApproxDP or ZCDP")
        self.budget = budget
        self._cap = as_vector(budget)
        self.keep_records = keep_records
        self.records: list[Record] = []
        self.num_releases = 0
        self.root = Scope(self, "root", Scope.SEQUENTIAL, None)

    @property
    def spent(self) -> Budget:
        return self.root.total

    @property
    def remaining_fraction(self) -> float:
        s, b = self.spent, self.budget
        if isinstance(b, ZCDP):
            return 1 - s.rho / b.rho if b.rho else 0.0
        return 1 - s.epsilon / b.epsilon if b.epsilon else 0.0

    def scope(self, *names: str, kind: str = "sequential") -> Scope:
        """A scope under the root (``names`` nest; intermediate scopes are sequential)."""
        s = self.root
        for n in names[:-1]:
            s = s.child(n)
        return s.child(names[-1], kind) if names else s

    def charge(self, cost: Budget, coordinates: tuple[Any, ...] = ()) -> None:
        self.root.charge(cost, coordinates)

    def _record(self, rec: Record | None) -> None:
        self.num_releases += 1
        if rec is not None:
            self.records.append(rec)
