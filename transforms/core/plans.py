"""What a release plans: which mechanism answers which query sets, with what share of the budget and why
(:class:`PlanEntry`), and, under an entry or a person unit, how each query set's noise is calibrated for it
(:class:`Calibration`). ``ContinualRelease.plan`` returns them; the run summary prints ``PlanEntry.text()``
and the manifest records it."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Calibration", "PlanEntry", "WEIGHTED_MECHANISMS", "weighted_shares"]

#: the mechanisms that split the budget over the query sets by their ``weight`` (the others split it their own
#: way and refuse unequal weights before the run)
WEIGHTED_MECHANISMS = ("auto", "net_change")


def weighted_shares(queries) -> tuple[float, ...]:
    """Each query set's share of a budget split over ``queries`` in proportion to their ``weight`` (equal weights,
    the default: ``1 / k`` each, exactly as before weights). The shares sum to 1 (up to rounding; the
    accountant composes the parts' actual charges)."""
    total = sum(q.weight for q in queries)
    return tuple(q.weight / total for q in queries)


@dataclass(frozen=True)
class Calibration:
    """How one query set's noise is calibrated for the configured privacy unit
    (a plan states it per query set under an entry or a person unit).

    ``method``: ``contribution`` (sensitivity by contribution: the counter's
    sensitivity to everything one entry / one person can change,
    ``docs/contribution.md``) or ``group`` (group privacy over ``g`` updates);
    ``multiplier``: the noise scale against the update level's at the same
    budget; ``exact``: the bound behind it is attained (else an upper bound);
    ``detail``: a one-line account."""

    query: str
    method: str
    multiplier: float
    exact: bool
    detail: str = ""

    def text(self) -> str:
        how = "sensitivity by contribution" if self.method == "contribution" else "group privacy"
        bound = "exact" if self.exact else "an upper bound"
        return f"{self.query}: noise x{self.multiplier:.4g} the update level's ({how}, {bound})"


@dataclass(frozen=True)
class PlanEntry:
    """Which mechanism answers which query sets, with what share of the budget
    and why (a release's plan: :meth:`ContinualRelease.plan`).

    ``reason`` None: the configured mechanism itself (the whole budget);
    ``counter`` / ``horizon``: the continual counter it runs over periods, and
    the number of periods it is planned for (None: unbounded);
    ``calibrations``: under an entry or a person unit, how each query set's
    noise is calibrated for it (:class:`Calibration`; empty at update level)."""

    mechanism: str
    queries: tuple[str, ...]
    share: float = 1.0
    reason: str | None = None
    counter: str | None = None
    horizon: int | None = None
    calibrations: tuple[Calibration, ...] = ()
    weights: tuple[float, ...] = ()

    @property
    def weighted(self) -> bool:
        """The configuration gave its query sets unequal weights (``queries[].weight``)."""
        return len(set(self.weights)) > 1

    def query_shares(self) -> tuple[float, ...] | None:
        """Each query set's share of the whole budget (this entry's share split by the weights); None when the
        mechanism splits its share its own way (no weights stated)."""
        if not self.weights:
            return None
        total = sum(self.weights)
        return tuple(self.share * w / total for w in self.weights)

    def text(self) -> str:
        """One line, as printed in the summary and recorded in the manifest."""
        note = ""
        if self.counter is not None:
            span = f"horizon {self.horizon} periods" if self.horizon else "unbounded"
            note = f" [counter {self.counter}, {span}]"
        head = f"{', '.join(self.queries)} -> {self.mechanism}{note}"
        if self.reason is None:
            line = f"{head} (the whole budget; configured)"
        else:
            line = f"{head} ({self.share:.0%} of the budget): {self.reason}"
        if self.weighted:
            parts = zip(self.queries, self.weights, self.query_shares())
            shares = ", ".join(f"{q} {w:g} ({s:.0%})" for q, w, s in parts)
            line += f"; weights: {shares} of the budget"
        if self.calibrations:
            line += "; " + "; ".join(c.text() for c in self.calibrations)
        return line
