"""Composition across releases, in the terms of the configured budget.

A dataset's releases are separate runs over the same data, each with its own noise: their guarantees compose
sequentially. Pure DP: the epsilons add up; zCDP: the rhos add up; (epsilon, delta): basic composition, the
epsilons add up and the deltas add up (the rule of the core's accountant, ``Ledger``'s sequential scope;
``docs/accounting.md``, "The ledger across releases"). Amounts are decimals of the configured numbers (the
shortest text of each float), so that a cap of 0.3 holds exactly three releases of 0.1: the sum is exact.
"""

from __future__ import annotations

from decimal import Decimal

from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP

__all__ = ["KINDS", "FIELDS", "kind_of", "amounts", "compose", "exceeds", "text", "left", "budget_of", "cap_of"]

#: the budget kinds a dataset's releases may have (all its releases have the same one)
KINDS = ("pure", "approx", "zcdp")
#: each kind's numbers, in the order of ``Budget.vector()``
FIELDS = {"pure": ("epsilon",), "approx": ("epsilon", "delta"), "zcdp": ("rho",)}
_CLASSES = {PureDP: "pure", ApproxDP: "approx", ZCDP: "zcdp"}


def kind_of(budget) -> str:
    """``pure``, ``approx`` or ``zcdp``: the kind of a core budget."""
    return _CLASSES[type(budget)]


def _decimal(x) -> Decimal:
    return Decimal(repr(float(x))) if not isinstance(x, (str, Decimal)) else Decimal(x)


def amounts(kind: str, values) -> dict[str, Decimal]:
    """``{field: Decimal}`` of ``values`` (a mapping or a sequence in the order of :data:`FIELDS`)."""
    fields = FIELDS[kind]
    if isinstance(values, dict):
        return {f: _decimal(values.get(f, 0) or 0) for f in fields}
    return {f: _decimal(v) for f, v in zip(fields, values, strict=True)}


def budget_of(budget) -> tuple[str, dict[str, Decimal]]:
    """A core budget (``cfg.target_budget()``) as ``(kind, amounts)``."""
    kind = kind_of(budget)
    return kind, amounts(kind, budget.vector())


def cap_of(kind: str, cap) -> dict[str, Decimal]:
    """The configured cap (``privacy.ledger.cap``, checked to have the budget's keys) in the kind's fields."""
    return amounts(kind, {f: getattr(cap, f) for f in FIELDS[kind]})


def compose(kind: str, spends) -> dict[str, Decimal]:
    """The guarantee of releases with these spends on the same data: sequential composition, field by field
    (pure: sum of epsilon; zCDP: sum of rho; (epsilon, delta): sum of epsilon and sum of delta)."""
    total = {f: Decimal(0) for f in FIELDS[kind]}
    for spend in spends:
        for f in total:
            total[f] += spend[f]
    return total


def exceeds(total: dict[str, Decimal], cap: dict[str, Decimal]) -> bool:
    """Whether ``total`` is over ``cap`` in any field (equal is within)."""
    return any(total[f] > cap[f] for f in cap)


def left(total: dict[str, Decimal], cap: dict[str, Decimal]) -> dict[str, Decimal]:
    """What the cap leaves after ``total`` (never below 0)."""
    return {f: max(cap[f] - total[f], Decimal(0)) for f in cap}


def text(amount: dict[str, Decimal]) -> str:
    """``epsilon=1.5, delta=1E-6`` as written: ``epsilon=1.5, delta=0.000001``."""
    return ", ".join(f"{f}={_plain(v)}" for f, v in amount.items())


def _plain(v: Decimal) -> str:
    return format(v.normalize(), "f")
