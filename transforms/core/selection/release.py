"""The in-memory open-key release: continual private key selection, then a continual count per
selected key (issue 33; proof: ``docs/open_keys.md``).

Per period (``step``): one period's ``(person, Update)`` pairs (the key is the first element of the
update's item) go through the person and key bounds (:mod:`.keys`: refused pairs come back with their
reason, for a dead letter); their key events update the candidates' plain-data state
(:mod:`.candidate`); every candidate with state that is not yet selected is tested
(``live + Z_p > T_p``); a key selected at ``p`` stays selected for good (a public fact from then on)
and from ``p`` on is answered like a declared key: a continual counter (``net_change``'s choice for
the noise kind and remaining horizon, :func:`~transforms.core.continual.net_change.choose_counter`) of
its live entries, whose first batch is the key's live entries at ``p`` and then each period's signed
change. Its answers before ``p`` are not released.

Neighbours and cost: one person more or less (the person unit; ``K`` keys, ``L`` entries of ``k``
mutations). The selection costs ``selection_cost`` (``eps_sel`` and ``delta_event``); the answers are
one histogram over the keys (parallel composition over keys: each key's counter is that histogram's
cell, ``noise.stream`` coordinates per key), calibrated by group privacy over ``g = L (2k - 1)``
updates (``calibrated_budget``), costing the rest of the budget. Both are charged to :attr:`ledger`
(capped at ``params.ledger_budget``) when the release starts: what they cost does not depend on the
data or on the number of periods.

A key that is never selected appears in no return value, exception or log line: a refusal names its
reason only, and the candidates' state is the operator's (the Beam step keeps it in keyed state).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from transforms.core.continual.net_change import choose_counter
from transforms.core.counters import make_counter
from transforms.core.foundation.accounting import Ledger
from transforms.core.foundation.noise import NoiseSource
from transforms.core.selection.answers import answer_budget
from transforms.core.selection.candidate import NodeNoise, apply_event
from transforms.core.selection.keys import KeyLimit, PersonKeys
from transforms.core.selection.params import SelectionParams
from transforms.core.static.linear import CountMechanism

__all__ = ["OpenKeyRelease", "PeriodRelease"]


@dataclass(frozen=True)
class PeriodRelease:
    """One period's release: ``answers`` {selected key: noisy count of its live entries} (every key
    selected so far), ``selected`` the keys selected at this period, ``refused`` ``((person, update),
    reason)`` for the dead letters (operator output, never released)."""

    period: int
    answers: dict
    selected: tuple
    refused: list


class OpenKeyRelease:
    """Continual private key selection and counts per selected key (module docstring)."""

    def __init__(self, params: SelectionParams, limit: KeyLimit, noise: NoiseSource):
        if params.max_keys_per_person != limit.max_keys:
            raise ValueError("params.max_keys_per_person and limit.max_keys differ")
        self.params, self.limit, self.noise = params, limit, noise
        kind = params.noise_kind
        self.answer_budget = answer_budget(params, limit)  # by contribution (answers.py), not group privacy
        self.ledger = Ledger(params.ledger_budget)
        self.ledger.charge(params.selection_cost, ("open_keys", "select"))
        self.ledger.charge(params.answers_budget, ("open_keys", "answers"))
        self.mechanism = CountMechanism(1, kind)
        self.persons = PersonKeys(limit)
        self.candidates: dict = {}  # key -> plain state (unselected keys with live contributors or entries)
        self.selected: dict = {}  # key -> (selection period, counter)
        self.entries: dict = {}  # selected key -> live entries (the truth; for the counters' batches)
        self.node_noise = NodeNoise(params, noise)
        self.period = 0

    def _counter(self, key, p: int):
        h = self.params.horizon
        horizon = None if h is None else h - p + 1
        name = choose_counter(self.params.noise_kind, horizon)
        return make_counter(
            name, self.mechanism, self.answer_budget, horizon=horizon, coords=("open_keys", "answer", key)
        )

    def step(self, updates) -> PeriodRelease:
        """Consume one period's ``(person, Update)`` pairs; release the period."""
        p = self.period + 1
        if self.params.horizon is not None and p > self.params.horizon:
            raise ValueError(f"the release's horizon ({self.params.horizon} periods) is reached")
        self.period = p
        _, refused, events = self.persons.decide_tick(p, updates)
        change: dict = {}
        for key, d_live, d_entries in events:
            if key in self.selected:
                change[key] = change.get(key, 0) + d_entries
                self.entries[key] += d_entries
                continue
            state = apply_event(self.candidates.get(key), d_live, d_entries)
            if state is None:
                self.candidates.pop(key, None)
                self.node_noise.forget(key)
            else:
                self.candidates[key] = state
        newly = []
        # in a canonical order (the candidates' dict order is their arrival order: not a release)
        for key, state in sorted(self.candidates.items(), key=lambda kv: repr(kv[0])):
            if self.node_noise.test(key, state, p):
                newly.append(key)
                del self.candidates[key]
                self.node_noise.forget(key)
                self.selected[key] = (p, self._counter(key, p))
                self.entries[key] = state["entries"]
                change[key] = state["entries"]  # the first batch: the key's live entries at p
        answers = {}
        for key, (_, counter) in self.selected.items():
            est = counter.step(np.array([change.get(key, 0)], dtype=np.int64), self.noise)
            answers[key] = int(round(float(est[0])))
        return PeriodRelease(p, answers, tuple(newly), refused)

    def truth(self) -> dict:
        """The exact live entries of every selected key (for tests and benchmarks)."""
        return dict(self.entries)

    def memory(self) -> dict:
        """Operator figures: candidates held and selected keys (confidential: the number of candidates
        is not a release)."""
        return {"candidates": len(self.candidates), "selected": len(self.selected)}
