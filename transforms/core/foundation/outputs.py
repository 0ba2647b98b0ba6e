"""What a continual release emits: answers, released pieces of its data
structure (node outputs), and the result of one driving call.

Every answer carries the tick it describes, the estimate per query, a valid
(1-beta) error bound and the budget spent so far (update level, in the
ledger's currency). Events (``horizon_reached``, ``budget_exhausted``,
``ended``) say why a mechanism stopped releasing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from transforms.core.foundation.accounting import Budget
from transforms.core.foundation.entries import Rejection
from transforms.core.foundation.state import state_class

__all__ = ["Answer", "NodeOutput", "TickResult", "EVENTS"]

EVENTS = {
    "ended": "the release reached its configured end (its last release is at or after the end tick)",
    "horizon_reached": "a declared horizon (segments, counter steps) is used up: no more releases",
    "budget_exhausted": "the ledger refused a release (the budget is used up): no more releases",
}


@state_class("output.answer")
@dataclass
class Answer:
    """One released answer (per query set, per segment close)."""

    stream: str
    tick: int
    segment: int
    query: str
    estimate: np.ndarray
    error_bound: float | None
    beta: float
    spent: Budget


@state_class("output.node")
@dataclass
class NodeOutput:
    """A released piece of the DP data structure (with its coordinates and cost).

    kind: ``static`` (M_Q at a round start), ``n_hat``, ``deletion_counter``
    (a raw release of a node counter), ``node_answer`` (the node's current
    answer, post-processing: the answer of a query is the sum of the
    ``node_answer`` values of the chain nodes at that segment).
    """

    stream: str
    tick: int
    segment: int
    node: int
    level: int
    round: int
    kind: str
    query: str
    values: np.ndarray
    cost: Budget | None
    coordinates: tuple = ()


@dataclass
class TickResult:
    """The outcome of one driving call: answers released, updates rejected by
    the in-memory registry (``process_tick``), ticks at which it released, and
    events ``(tick, name)`` (see :data:`EVENTS`)."""

    answers: list[Answer] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    closes: list[int] = field(default_factory=list)
    events: list[tuple[int, str]] = field(default_factory=list)
