"""The release ledger: every release's cost in a tree of composition scopes.

A :class:`Ledger` is configured with a total budget and records every release
(its cost and coordinates) in a tree of composition scopes: the cost of a
sequential scope is the sum of its children's, the cost of a parallel scope (its
members see disjoint data) is the maximum. A charge that would take the root
over the configured total raises :class:`~.budgets.BudgetExceededError` *before*
the caller draws any noise, and leaves the ledger unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .budgets import Budget, BudgetExceededError

__all__ = ["Record", "Scope", "Ledger"]

_TOL = 1e-12  # relative float tolerance when comparing a spend with a budget
_ZEROS = {1: (0.0,), 2: (0.0, 0.0)}  # a new member's former total (eps or rho; eps and delta), per charge


@dataclass(frozen=True)
class Record:
    """One release: where it is (coordinates) and what it cost.

    ``scopes``: the scopes it was charged in, from the root's child down (the objects: a closed scope leaves the
    tree, and a later scope may take its path; an audit composes each record in the scope it was charged in)."""

    coordinates: tuple[Any, ...]
    cost: Budget
    scope: tuple[str, ...]
    scopes: tuple = field(default=(), compare=False, repr=False)


class Scope:
    """A composition scope of a :class:`Ledger`.

    ``kind="sequential"``: children compose by summation; ``kind="parallel"``:
    children run on disjoint data and compose by maximum. Leaf charges are
    one-shot members of their scope. A child scope that will not be charged
    again can be :meth:`close`-d: its total stays folded into its parent's and
    its bookkeeping is freed (long-running streams must not keep every node).
    Totals are kept as float vectors in the ledger's currency.

    ``sensitivity`` (a ratio >= 1, default 1): the releases charged in this
    scope and its children are calibrated to one update, but the ledger's
    neighbours (a privacy unit: an entry, a person) can change their input by
    up to ``sensitivity`` times as much; each charge is recorded as its cost
    at that sensitivity (``Budget.at_sensitivity``: eps * r, rho * r^2), so the
    ledger's totals state the unit's guarantee directly (sensitivity by
    contribution, ``docs/contribution.md``). Set once, at the scope's creation.
    """

    SEQUENTIAL = "sequential"
    PARALLEL = "parallel"
    sensitivity = 1.0  # an instance attribute only where it is not 1 (older state has none)
    # ``total``'s Budget for the totals tuple it was built from (rebuilt on first use; not stored state)
    _STATE_EXCLUDE = ("_total_memo",)

    def __init__(self, ledger: Ledger, name: str, kind: str, parent: Scope | None):
        if kind not in (self.SEQUENTIAL, self.PARALLEL):
            raise ValueError(f"scope kind must be sequential or parallel, got {kind!r}")
        self.ledger = ledger
        self.name = name
        self.kind = kind
        self.parent = parent
        self._total: tuple[float, ...] = tuple(0.0 for _ in ledger.budget.vector())
        self.children: dict[str, Scope] = {}
        self.closed = False

    @property
    def total(self) -> Budget:
        # Every answer of every period asks for the spend (``Ledger.spent``), which changes only on a charge.
        # A charge replaces ``_total`` by a new tuple, so the Budget built from the tuple held in the memo (by
        # identity: the memo keeps that tuple alive, its id cannot be reused) is the one ``from_vector`` would
        # build now; a restored scope has another tuple and builds its own. Budgets are frozen values.
        memo = self.__dict__.get("_total_memo")
        if memo is not None and memo[0] is self._total:
            return memo[1]
        out = self.ledger.budget.from_vector(self._total)
        self._total_memo = (self._total, out)
        return out

    @property
    def path(self) -> tuple[str, ...]:
        return (self.parent.path if self.parent else ()) + ((self.name,) if self.parent else ())

    def child(self, name: str, kind: str = "sequential", *, sensitivity: float = 1.0) -> Scope:
        """The child scope ``name`` (created on first use); ``sensitivity``: the
        ratio its charges are scaled by (on top of this scope's)."""
        if self.closed:
            raise RuntimeError(f"scope {self.path} is closed")
        if not sensitivity >= 1.0:
            raise ValueError(f"a scope's sensitivity ratio is >= 1, got {sensitivity!r}")
        ratio = self.sensitivity * float(sensitivity)
        c = self.children.get(name)
        if c is None:
            c = Scope(self.ledger, str(name), kind, self)
            if ratio != 1.0:
                c.sensitivity = ratio
            self.children[name] = c
        elif c.kind != kind:
            raise ValueError(f"scope {c.path} exists as {c.kind}, asked for {kind}")
        elif c.sensitivity != ratio:
            raise ValueError(f"scope {c.path} exists at sensitivity {c.sensitivity}, asked for {ratio}")
        return c

    def _cost(self, cost: Budget) -> Budget:
        """``cost`` in the ledger's currency, at this scope's sensitivity."""
        cost = self.ledger.budget.express(cost)
        return cost if self.sensitivity == 1.0 else cost.at_sensitivity(self.sensitivity)

    def _propagated(self, cost: tuple[float, ...]) -> list[tuple[Scope, tuple[float, ...]]]:
        """New totals of this scope and its ancestors after adding a member of ``cost``."""
        out = []
        scope = self
        old = _ZEROS.get(len(cost)) or tuple(0.0 for _ in cost)
        new = cost
        while scope is not None:
            cur = scope._total
            if len(cur) == 1:  # eps or rho (the same arithmetic, without the generators: one charge per node)
                nxt = (cur[0] + (new[0] - old[0]),) if scope.kind == Scope.SEQUENTIAL else (max(cur[0], new[0]),)
            elif scope.kind == Scope.SEQUENTIAL:
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
        updates = self._propagated(self._cost(cost).vector())
        root = self.ledger.root
        total = {id(s): t for s, t in updates}.get(id(root), root._total)
        return self.ledger.budget.from_vector(total)

    def charge(self, cost: Budget, coordinates: tuple[Any, ...] = ()) -> None:
        """Record a release of ``cost``; raise before anything changes if the
        configured budget would be exceeded."""
        if self.closed:
            raise RuntimeError(f"scope {self.path} is closed")
        cost = self._cost(cost)
        updates = self._propagated(cost.vector())
        last_scope, last_total = updates[-1]
        if last_scope is self.ledger.root:
            cap = self.ledger._cap
            if (
                last_total[0] > cap[0] * (1 + _TOL) + 1e-300
                if len(cap) == 1 == len(last_total)  # eps or rho: the test below without its generator
                else any(x > c * (1 + _TOL) + 1e-300 for x, c in zip(last_total, cap))
            ):
                raise BudgetExceededError(
                    f"release at {tuple(coordinates)} costing {cost} would bring the total to "
                    f"{self.ledger.budget.from_vector(last_total)}, over the configured budget {self.ledger.budget}"
                )
        for scope, total in updates:
            scope._total = total
        keep = self.ledger.keep_records
        self.ledger._record(Record(tuple(coordinates), cost, self.path, self._chain()) if keep else None)

    def _chain(self) -> tuple[Scope, ...]:
        """This scope and its ancestors below the root, outermost first."""
        out, scope = [], self
        while scope.parent is not None:
            out.append(scope)
            scope = scope.parent
        return tuple(reversed(out))

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
        if not isinstance(budget, Budget):
            raise TypeError("ledger budget must be PureDP, ApproxDP or ZCDP")
        self.budget = budget
        self._cap = budget.vector()
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
        return 1 - s.primary / b.primary if b.primary else 0.0

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
