"""The in-memory open-key release: continual private key selection, then a continual count per
selected key (issue 33; proof: ``docs/open_keys.md``).

Per period (``step``): one period's ``(person, Update)`` pairs (the key is the first element of the
update's item) go through the person and key bounds (:mod:`.keys`: refused pairs come back with their
reason, for a dead letter); their key events update the candidates' plain-data state
(:mod:`.candidate`); every candidate with state that is not yet selected is tested
(``live + Z_p > T_p``); a key selected at ``p`` stays selected for good (a public fact from then on)
and from ``p`` on is answered like a declared key: a continual counter (``net_change``'s choice for
the noise kind and remaining horizon, :func:`answer_counter`) of
its live entries, whose first batch is the key's live entries at ``p`` and then each period's signed
change. Its answers before ``p`` are not released.

Neighbours and cost: one person more or less (the person unit; ``K`` keys, ``L`` entries of ``k``
mutations). The selection costs ``selection_cost`` (``eps_sel`` and ``delta_event``); the answers'
counters are calibrated by contribution (:mod:`.answers`) and cost the rest of the budget. Both are
charged to :attr:`ledger` (capped at ``params.ledger_budget``) when the release starts: what they cost
does not depend on the data or on the number of periods (a run without an end included: the selection
composes over unbounded periods, the answers' counters are the unbounded ones, ``docs/open_keys.md``).
Every answer comes with its stated (1 - beta) bound (:meth:`KeyContext.bound`). ``max_keys`` caps the
released keys (:func:`admit_keys`: post-processing of the selection, free).

A key that is never selected appears in no return value, exception or log line: a refusal names its
reason only, and the candidates' state is the operator's (the Beam step keeps it in keyed state).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from transforms.core.counters import make_counter
from transforms.core.foundation import state as state_format
from transforms.core.foundation.accounting import Ledger
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import StateError, migrated, restore, to_plain
from transforms.core.selection.answers import answer_budget, answer_counter
from transforms.core.selection.candidate import CANDIDATE_STATE_VERSION, NodeNoise, apply_event, key_coords
from transforms.core.selection.keys import KeyLimit, PersonKeys
from transforms.core.selection.params import SelectionParams
from transforms.core.static.linear import CountMechanism

__all__ = [
    "KEY_STATE_VERSION",
    "KeyContext",
    "OpenKeyRelease",
    "PeriodRelease",
    "SelectedKey",
    "admit_keys",
    "advance_key",
    "answer_counter",
    "key_state_from_plain",
    "key_state_to_plain",
]

KEY_STATE_VERSION = 1


@dataclass(frozen=True)
class PeriodRelease:
    """One period's release: ``answers`` {selected key: noisy count of its live entries} (every key
    selected so far), ``selected`` the keys selected at this period, ``refused`` ``((person, update),
    reason)`` for the dead letters (operator output, never released), ``bounds`` {selected key: the
    stated (1 - beta) bound of its answer} (:meth:`KeyContext.bound`)."""

    period: int
    answers: dict
    selected: tuple
    refused: list
    bounds: dict = field(default_factory=dict)


def admit_keys(new_keys, released: int, max_keys: int | None) -> tuple[list, list]:
    """``streams.max_keys``, the cap on RELEASED keys: the keys whose selection test passed at one period
    (``new_keys``), ``released`` keys released before it -> ``(admitted, refused)``: in the canonical
    order (``repr``, not arrival), as many as the cap leaves room for. Once the cap is reached no key is
    admitted any more. **Costs nothing and keeps the proof**: the rule reads only what was already
    released and which keys passed their (private) tests, i.e. it is post-processing of the selection's
    output; it never looks at candidates' counts or arrival order (capping the candidates held in state
    by arrival would let one person's key push out another's: not private)."""
    ordered = sorted(new_keys, key=repr)
    if max_keys is None:
        return ordered, []
    room = max(0, int(max_keys) - int(released))
    return ordered[:room], ordered[room:]


class KeyContext:
    """What every key's step reads and nothing in it writes (but the node-noise cache): the parameters,
    the answers' budget (calibrated once by the release), the count mechanism and the noise. The
    in-memory driver holds one; each Beam worker builds its own from the same values (``remember``
    False: the node noise is redrawn, never cached across keys, so a worker's memory does not grow with
    the keys it has seen)."""

    def __init__(
        self, params: SelectionParams, answer_budget, noise: NoiseSource, *, remember: bool = True, beta: float = 0.05
    ):
        if not 0 < beta < 1:
            raise ValueError(f"beta must be in (0, 1), got {beta!r}")
        self.params, self.answer_budget, self.noise = params, answer_budget, noise
        self.mechanism = CountMechanism(1, params.noise_kind)
        self.node_noise = NodeNoise(params, noise)
        self.remember, self.beta = remember, float(beta)
        self._bounds: dict = {}  # (selection period, counter steps) -> bound: the same for every key

    def bound(self, state: SelectedKey) -> float:
        """The stated (1 - beta) bound of a selected key's latest answer: its counter's own
        ``error_bound(beta)`` (the noise profile that calibrates the answer: the counter built with the
        answers' budget, by contribution, not a group-privacy figure), **+ 1/2** because the answer is
        the estimate rounded to an integer (``|round(x) - n| <= |x - n| + 1/2`` for an integer truth
        ``n``; a clamp at 0 only moves it towards a truth >= 0). 0 with the noise off (nothing added; the
        estimate of an integer truth rounds to it). The bound depends on the counter's kind, horizon
        (from the selection period) and steps only, so it is cached by those (public) numbers."""
        c = state.counter
        at = (state.period, c.t)
        b = self._bounds.get(at)
        if b is None:
            raw = float(c.error_bound(self.beta))
            b = 0.0 if raw == 0.0 else raw + 0.5
            if len(self._bounds) > 4096:  # a worker's memory does not grow with the periods
                self._bounds.clear()
            self._bounds[at] = b
        return b

    def counter(self, key, p: int):
        """A key's answer counter, started at its selection period ``p``: ``net_change``'s choice for the
        noise kind and the remaining horizon, noise at ``("open_keys", "answer", key, ...)``."""
        h = self.params.horizon
        horizon = None if h is None else h - p + 1
        name = answer_counter(self.params.noise_kind, horizon)
        return make_counter(
            name, self.mechanism, self.answer_budget, horizon=horizon, coords=("open_keys", "answer", *key_coords(key))
        )


class SelectedKey:
    """A selected key: its selection period, its live entries (the truth, for the counter's batches),
    its counter and its latest answer."""

    __slots__ = ("period", "entries", "counter", "answer")

    def __init__(self, period: int, entries: int, counter, answer: int | None = None):
        self.period, self.entries, self.counter, self.answer = period, entries, counter, answer


def advance_key(ctx: KeyContext, key, state, d_live: int, d_entries: int, p: int):
    """One key's period ``p``: the key events' sums ``d_live`` (contributors) and ``d_entries`` (live
    entries) of the period, from ``state`` (None: no state; a candidate's plain dict; a
    :class:`SelectedKey`) -> ``(new state, answer or None, selected at p)``. A candidate with state is
    tested (``NodeNoise.test``); once selected its counter takes the key's live entries as its first
    batch, then each period's signed change. ``state`` None and no event: nothing (None, None, False).
    What the in-memory driver and the Beam step both call, so they release the same values."""
    if isinstance(state, SelectedKey):
        state.entries += int(d_entries)
        est = state.counter.step(np.array([int(d_entries)], dtype=np.int64), ctx.noise)
        state.answer = int(round(float(est[0])))
        return state, state.answer, False
    if state is None and not d_live and not d_entries:
        return None, None, False
    cand = apply_event(state, d_live, d_entries)
    if cand is None:
        ctx.node_noise.forget(key)
        return None, None, False
    hit = ctx.node_noise.test(key, cand, p)
    if not ctx.remember or hit:
        ctx.node_noise.forget(key)
    if not hit:
        return cand, None, False
    chosen = SelectedKey(p, 0, ctx.counter(key, p))
    advance_key(ctx, key, chosen, 0, cand["entries"], p)  # the first batch: the key's live entries at p
    return chosen, chosen.answer, True


def key_state_to_plain(state):
    """A key's state as versioned plain data (what the Beam step stores): a candidate's dict as it is;
    a selected key ``{"v", "selected", "entries", "answer", "counter": the counter's plain form, "schema":
    the state format's schema it was written in}`` (so a later schema's migrations reach the counter, which
    is stored outside a mechanism's envelope; a state without ``schema``, written before stop 50, is of
    schema 2)."""
    if not isinstance(state, SelectedKey):
        return state
    return {
        "v": KEY_STATE_VERSION,
        "selected": state.period,
        "entries": state.entries,
        "answer": state.answer,
        "counter": to_plain(state.counter),
        "schema": state_format.SCHEMA,
    }


def key_state_from_plain(plain):
    """The inverse of :func:`key_state_to_plain`."""
    if plain is None:
        return None
    if type(plain) is not dict or plain.get("v") not in (CANDIDATE_STATE_VERSION, KEY_STATE_VERSION):
        raise StateError(f"not an open key state of version {KEY_STATE_VERSION}")
    if "selected" not in plain:
        return plain
    counter = migrated(plain["counter"], plain.get("schema", 2), "open_keys.counter")
    return SelectedKey(plain["selected"], plain["entries"], restore(counter), plain["answer"])


class OpenKeyRelease:
    """Continual private key selection and counts per selected key (module docstring)."""

    def __init__(
        self,
        params: SelectionParams,
        limit: KeyLimit,
        noise: NoiseSource,
        *,
        beta: float = 0.05,
        max_keys: int | None = None,
    ):
        if params.max_keys_per_person != limit.max_keys:
            raise ValueError("params.max_keys_per_person and limit.max_keys differ")
        if max_keys is not None and (isinstance(max_keys, bool) or not isinstance(max_keys, int) or max_keys < 1):
            raise ValueError(f"max_keys must be an integer >= 1 or None, got {max_keys!r}")
        self.max_keys = max_keys  # the cap on released keys (admit_keys); None: no cap
        self.params, self.limit, self.noise = params, limit, noise
        self.answer_budget = answer_budget(params, limit)  # by contribution (answers.py), not group privacy
        self.ledger = Ledger(params.ledger_budget)
        self.ledger.charge(params.selection_cost, ("open_keys", "select"))
        self.ledger.charge(params.answers_budget, ("open_keys", "answers"))
        self.persons = PersonKeys(limit)
        self.candidates: dict = {}  # key -> plain state (unselected keys with live contributors or entries)
        self.selected: dict = {}  # key -> SelectedKey (its selection period, live entries, counter)
        self.context = KeyContext(params, self.answer_budget, noise, beta=beta)
        self.period = 0

    def step(self, updates) -> PeriodRelease:
        """Consume one period's ``(person, Update)`` pairs; release the period."""
        p = self.period + 1
        if self.params.horizon is not None and p > self.params.horizon:
            raise ValueError(f"the release's horizon ({self.params.horizon} periods) is reached")
        self.period = p
        _, refused, events = self.persons.decide_tick(p, updates)
        change: dict = {}
        for key, d_live, d_entries in events:
            c = change.setdefault(key, [0, 0])
            c[0] += d_live
            c[1] += d_entries
        ctx = self.context
        passed = {}
        # in a canonical order (the candidates' dict order is their arrival order: not a release); every
        # key's noise is drawn at its own coordinates, so the order changes no value
        for key in sorted(set(self.candidates).union(change), key=repr) if not self.cap_reached else ():
            if key in self.selected:
                continue
            d_live, d_entries = change.get(key, (0, 0))
            state, _, selected = advance_key(ctx, key, self.candidates.get(key), d_live, d_entries, p)
            self.candidates.pop(key, None)
            if selected:
                passed[key] = state
            elif state is not None:
                self.candidates[key] = state
        newly, _ = admit_keys(passed, len(self.selected), self.max_keys)  # the refused ones: dropped
        self.selected.update((key, passed[key]) for key in newly)
        if self.cap_reached:  # no key is tested any more: the candidates' state is dropped
            self.candidates.clear()
        answers, bounds = {}, {}
        for key, state in self.selected.items():
            if key in newly:
                answers[key] = state.answer
            else:
                _, d_entries = change.get(key, (0, 0))
                state, answers[key], _ = advance_key(ctx, key, state, 0, d_entries, p)
            bounds[key] = ctx.bound(state)
        return PeriodRelease(p, answers, tuple(newly), refused, bounds)

    @property
    def cap_reached(self) -> bool:
        """Whether ``max_keys`` keys are released (public: the released keys are)."""
        return self.max_keys is not None and len(self.selected) >= self.max_keys

    @property
    def node_noise(self) -> NodeNoise:
        return self.context.node_noise

    @property
    def entries(self) -> dict:
        """Selected key -> its live entries (the truth; operator-side)."""
        return self.truth()

    def truth(self) -> dict:
        """The exact live entries of every selected key (for tests and benchmarks)."""
        return {key: state.entries for key, state in self.selected.items()}

    def memory(self) -> dict:
        """Operator figures: candidates held and selected keys (confidential: the number of candidates
        is not a release)."""
        return {"candidates": len(self.candidates), "selected": len(self.selected)}
