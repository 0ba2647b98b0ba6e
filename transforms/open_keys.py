# ruff: noqa: B008 - Beam's stateful DoFn idiom: state and timer parameters are declared as defaults
"""The open-key step (issue 33): continual private key selection and a count per selected key in Beam,
the candidates spread over workers (a Beam key per candidate key, never one big state cell).

Input: ``(person, (tick, Update))`` (the key is the first element of the update's item, as in
:mod:`transforms.core.selection.keys`), each element timestamped in its tick. Output: ``(period, key,
answer)`` for every selected key at every period from its selection period to the end (a key never
selected is in no output), and dead letters (tag ``dead_letters``) for the refused updates. Periods are
ticks (``release.every_ticks`` 1).

Two stages, the same per-key code as the in-memory driver
(:class:`~transforms.core.selection.release.OpenKeyRelease`)::

  (person, (tick, Update)) ──► OpenKeyPersons: keyed by person, PersonKeys.decide_person per tick
      streaming: state ``open_person`` (versioned plain data), timer ``tick_end`` at the earliest
                 pending tick's close (``StreamSpec.closes_at``), as the person step
      bounded:   GroupOpenKeyPersons + OpenKeyPersons (all of a person's updates at once, tick by tick)
  ── (key, (tick, d_contributors, d_entries)) ──► OpenKeys: keyed by candidate key, advance_key per period
      streaming: state ``open_key`` (versioned plain data), timer ``period_end`` at ``final_at(p)`` for
                 every period while the key has state (a candidate is tested every period, a selected
                 key answers every period to the end); a candidate whose contributors and entries
                 have all left is evicted: state cleared, no timer
      bounded:   GroupOpenKeys + OpenKeys (a key's events at once, period by period)

**Why it keeps the guarantee**: a person's decisions read only that person's records and state; a key's
test and answers read only that key's state and events, and their noise is drawn at the key's own
coordinates (``noise.stream("open_keys", ...)``), so the Beam step releases exactly what the in-memory
driver releases (the tests check it), whose proof is ``docs/open_keys.md``. When a key is tested or
answered is public: every period from the tick of its first event (while it has state) or its selection
to the configured end; nothing here is released but the selected keys' answers. The number of candidates
is operator-only: no metric counts them (the counters below count persons' refused updates and selected
keys, which are public from their selection on).
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.coders import FastPrimitivesCoder
from apache_beam.metrics import Metrics
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import ReadModifyWriteStateSpec, TimerSpec, on_timer

from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import StateError
from transforms.core.selection.keys import KeyLimit, PersonKeys, new_keys_state
from transforms.core.selection.params import SelectionParams
from transforms.core.selection.release import (
    OpenKeyRelease,
    advance_key,
    key_state_from_plain,
    key_state_to_plain,
)
from transforms.spec import NAMESPACE as SPEC_NAMESPACE

__all__ = ["OPEN_KEYS_CELL_VERSION", "DEAD", "OpenKeysFn", "ReleaseOpenKeys", "decide_person", "run_key"]

NAMESPACE = "dp_dynamic.open_keys"
OPEN_KEYS_CELL_VERSION = 1
DEAD = "dead_letters"
STAGE = "open_keys"
_REFUSED = Metrics.counter(NAMESPACE, "updates_refused")
# the pipelines' summary reads this one in the common namespace (counts only: never a key or person)
_ACCEPTED = Metrics.counter(SPEC_NAMESPACE, "updates_accepted")
_SELECTED = Metrics.counter(NAMESPACE, "keys_selected")
# the stateful DoFn parameters, short
_KEY, _TS, _STATE, _TIMER = beam.DoFn.KeyParam, beam.DoFn.TimestampParam, beam.DoFn.StateParam, beam.DoFn.TimerParam


def _plain(tick: int, u: Update) -> tuple:
    return (int(tick), u.op, u.entry_id, None if u.item is None else tuple(u.item))


def _update(t: tuple) -> Update:
    return Update(t[1], t[2], t[3])


def _dead(reason: str, tick: int, u: Update) -> dict:
    """A refused update for the operator's dead letters: the reason, tick, op and entry id; never the person,
    nor the item (it names a key, maybe one never selected: such a key is in no output at all)."""
    return {"stage": STAGE, "reason": reason, "tick": tick, "op": u.op, "entry_id": u.entry_id}


def decide_person(keys: PersonKeys, state, person, updates) -> tuple[dict, list]:
    """A person's plain updates ``(tick, op, entry id, item)`` from ``state``, tick by tick ->
    ``(new state, outputs)``: key events ``(key, (tick, d_contributors, d_entries))`` and tagged dead
    letters."""
    by_tick: dict = {}
    for t in updates:
        by_tick.setdefault(t[0], []).append((person, _update(t)))
    out = []
    for tick in sorted(by_tick):
        state, accepted, refused, events = keys.decide_person(state, tick, by_tick[tick])
        if accepted:
            _ACCEPTED.inc(len(accepted))
        for (_, u), reason in refused:
            _REFUSED.inc()
            out.append(beam.pvalue.TaggedOutput(DEAD, _dead(reason, tick, u)))
        out += [(key, (tick, d_live, d_entries)) for key, d_live, d_entries in events]
    return state, out


def run_key(ctx, key, state, last: int, events, upto: int, end: int) -> tuple:
    """Periods ``last + 1 .. min(upto, end)`` of one key: ``events`` ``(period, d_contributors,
    d_entries)`` (any order; those after ``upto`` are returned) -> ``(state, last period run, answers
    [(period, answer)], events left)``. A key without state skips to its next event's period."""
    stop = min(upto, end)
    due: dict = {}
    later = []
    for p, dl, de in events:
        if p > stop:
            later.append((p, dl, de))
        else:
            c = due.setdefault(max(int(p), last + 1), [0, 0])
            c[0] += dl
            c[1] += de
    answers = []
    p = last
    while p < stop:
        if state is None:
            nxt = [q for q in due if q > p]
            if not nxt:
                p = stop
                break
            p = min(nxt)
        else:
            p += 1
        dl, de = due.pop(p, (0, 0))
        state, answer, newly = advance_key(ctx, key, state, dl, de, p)
        if newly:
            _SELECTED.inc()
        if answer is not None:
            answers.append((p, answer))
    return state, p, answers, later


class _Setup(beam.DoFn):
    def __init__(self, params: SelectionParams, limit: KeyLimit, noise, spec, end: int):
        self.params, self.limit, self.noise, self.spec, self.end = params, limit, noise, spec, int(end)

    def setup(self):
        self.keys = PersonKeys(self.limit)
        noise = self.noise
        if not isinstance(noise, NoiseSource):  # (NoiseKey, ReleaseIdentity): the key is loaded on the worker
            key, release = noise
            noise = key.load().for_release(release)
        # the context the in-memory driver builds (its answers' budget included), without the node cache
        self.ctx = OpenKeyRelease(self.params, self.limit, noise).context
        self.ctx.remember = False


class OpenKeyPersonsFn(_Setup):
    """Streaming stage 1: state per person ``(version, person key state, last tick, timer tick, pending
    plain updates)``; decides a tick's updates when it closes."""

    PERSON = ReadModifyWriteStateSpec("open_person", FastPrimitivesCoder())
    TICK_END = TimerSpec("tick_end", TimeDomain.WATERMARK)

    def process(self, element, cell=_STATE(PERSON), timer=_TIMER(TICK_END)):
        _, (tick, u) = element
        state, last, timer_tick, pending = _read(cell.read(), 5, (new_keys_state(), 0, None, ()))
        tick = max(int(tick), last + 1)  # a late update is decided at the person's next tick
        if timer_tick is None or tick < timer_tick:
            timer_tick = tick
            timer.set(self.spec.closes_at(tick))
        cell.write((OPEN_KEYS_CELL_VERSION, state, last, timer_tick, (*pending, _plain(tick, u))))

    @on_timer(TICK_END)
    def on_tick_end(self, key=_KEY, ts=_TS, cell=_STATE(PERSON), timer=_TIMER(TICK_END)):
        upto = self.spec.closed_tick(ts)
        state, last, _, pending = _read(cell.read(), 5, (new_keys_state(), 0, None, ()))
        now = [t for t in pending if t[0] <= upto]
        later = tuple(t for t in pending if t[0] > upto)
        state, out = decide_person(self.keys, state, key, now)
        yield from out
        nxt = min(t[0] for t in later) if later else None
        cell.write((OPEN_KEYS_CELL_VERSION, state, max(upto, last), nxt, later))
        if nxt is not None:
            timer.set(self.spec.closes_at(nxt))


class OpenKeyPersonsBoundedFn(_Setup):
    """Bounded stage 1: all of a person's updates at once."""

    def process(self, element):
        person, values = element
        _, out = decide_person(self.keys, None, person, [_plain(t, u) for t, u in values])
        yield from out


class OpenKeysFn(_Setup):
    """Streaming stage 2: state per candidate key ``(version, key state (plain), last period, timer
    period, pending events)``; one timer per period while the key has state."""

    KEY = ReadModifyWriteStateSpec("open_key", FastPrimitivesCoder())
    PERIOD_END = TimerSpec("period_end", TimeDomain.WATERMARK)

    def process(self, element, cell=_STATE(KEY), timer=_TIMER(PERIOD_END)):
        _, event = element
        state, last, timer_p, pending = _read(cell.read(), 5, (None, 0, None, ()))
        p = max(int(event[0]), last + 1)
        if p > self.end:
            return  # after the configured end: nothing is released any more
        if timer_p is None or p < timer_p:
            timer_p = p
            timer.set(self.spec.final_at(p))
        cell.write((OPEN_KEYS_CELL_VERSION, state, last, timer_p, (*pending, (p, *event[1:]))))

    @on_timer(PERIOD_END)
    def on_period_end(self, key=_KEY, ts=_TS, cell=_STATE(KEY), timer=_TIMER(PERIOD_END)):
        upto = self.spec.final_tick(ts)
        plain, last, _, pending = _read(cell.read(), 5, (None, 0, None, ()))
        state, last, answers, later = run_key(self.ctx, key, key_state_from_plain(plain), last, pending, upto, self.end)
        for p, answer in answers:
            yield (p, key, answer)
        if state is not None and last < self.end:
            nxt = last + 1
        elif later:
            nxt = min(e[0] for e in later)
        else:
            nxt = None
        if (state is None and not later) or last >= self.end:
            cell.clear()  # evicted, or the release is over: the key leaves no state
            return
        cell.write((OPEN_KEYS_CELL_VERSION, key_state_to_plain(state), last, nxt, tuple(later)))
        if nxt is not None:
            timer.set(self.spec.final_at(nxt))


class OpenKeysBoundedFn(_Setup):
    """Bounded stage 2: a key's events at once, periods 1 to the end."""

    def process(self, element):
        key, events = element
        _, _, answers, _ = run_key(self.ctx, key, None, 0, list(events), self.end, self.end)
        for p, answer in answers:
            yield (p, key, answer)


def _read(cell, n: int, default: tuple) -> tuple:
    if cell is None:
        return default
    if type(cell) is not tuple or len(cell) != n or cell[0] != OPEN_KEYS_CELL_VERSION:
        raise StateError(f"not an open keys cell of version {OPEN_KEYS_CELL_VERSION}")  # no payload
    return cell[1:]


class ReleaseOpenKeys(beam.PTransform):
    """``(person, (tick, Update))`` -> ``(period, key, answer)`` (main) and dead letters (``dead_letters``)
    (module docstring). ``spec``: the :class:`~transforms.spec.StreamSpec` (its ``closes_at``,
    ``closed_tick``, ``final_at``, ``final_tick``); ``end``: the last period (the selection's horizon:
    required, a public end). ``noise``: a NoiseSource, or ``(NoiseKey, ReleaseIdentity)`` (the pipelines: the
    key is loaded on the workers, never put in the graph)."""

    def __init__(self, params: SelectionParams, limit: KeyLimit, noise, spec, bounded: bool):
        super().__init__()
        if params.horizon is None:
            raise ValueError("open keys in Beam need a horizon (the configured end)")
        self.args = (params, limit, noise, spec, params.horizon)
        self.bounded = bounded

    def expand(self, pcoll):
        if self.bounded:
            grouped = pcoll | "GroupOpenKeyPersons" >> beam.GroupByKey()
            persons = grouped | "OpenKeyPersons" >> beam.ParDo(OpenKeyPersonsBoundedFn(*self.args)).with_outputs(
                DEAD, main="events"
            )
            by_key = persons.events | "GroupOpenKeys" >> beam.GroupByKey()
            answers = by_key | "OpenKeys" >> beam.ParDo(OpenKeysBoundedFn(*self.args))
        else:
            persons = pcoll | "OpenKeyPersons" >> beam.ParDo(OpenKeyPersonsFn(*self.args)).with_outputs(
                DEAD, main="events"
            )
            answers = persons.events | "OpenKeys" >> beam.ParDo(OpenKeysFn(*self.args))
        return {"answers": answers, DEAD: persons[DEAD]}
