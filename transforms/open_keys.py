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
to the configured end, or without one to the wall clock's period when the input ends (``OpenKeysFn._input_ended``);
nothing here is released but the selected keys' answers. The number of candidates
is operator-only: no metric counts them (the counters below count persons' refused updates and selected
keys, which are public from their selection on).
"""

from __future__ import annotations

import time

import apache_beam as beam
from apache_beam.coders import BytesCoder, FastPrimitivesCoder
from apache_beam.metrics import Metrics
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.utils.timestamp import Timestamp

import transforms.state_cache  # noqa: F401  (user state: the SDK's cache without its scan of every module)
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import StateError
from transforms.core.foundation.state_chunks import ChunkStore
from transforms.core.selection.keys import KeyLimit, PersonKeys, new_keys_state
from transforms.core.selection.params import SelectionParams
from transforms.core.selection.release import (
    OpenKeyRelease,
    admit_keys,
    advance_key,
    key_state_from_plain,
    key_state_to_plain,
)
from transforms.spec import NAMESPACE as SPEC_NAMESPACE

__all__ = [
    "OPEN_KEYS_CELL_VERSION",
    "DEAD",
    "OpenKeysBoundedFn",
    "OpenKeysCapFn",
    "OpenKeysFn",
    "OpenKeysSelectBoundedFn",
    "ReleaseOpenKeys",
    "admitted_keys",
    "decide_person",
    "run_key",
]

NAMESPACE = "dp_dynamic.open_keys"
OPEN_KEYS_CELL_VERSION = 1
DEAD = "dead_letters"
STAGE = "open_keys"
_REFUSED = Metrics.counter(NAMESPACE, "updates_refused")
# the pipelines' summary reads this one in the common namespace (counts only: never a key or person)
_ACCEPTED = Metrics.counter(SPEC_NAMESPACE, "updates_accepted")
_SELECTED = Metrics.counter(NAMESPACE, "keys_selected")
# 1 when streams.max_keys keys are released (public: the released keys are); the keys refused after the cap
# are NOT counted (how many candidates pass their test after the cap is not a released figure)
# (in the common namespace: the pipelines' summary says it)
_CAP_REACHED = Metrics.counter(SPEC_NAMESPACE, "open_keys_max_keys_reached")
#: timers are never set at or past this time (well inside Beam's range): a run without an end schedules one
#: period at a time, and the periods past Beam's time range are never scheduled
MAX_TS = Timestamp.of(2**62 / 1e6)
#: The wall clock (epoch seconds) that ends a key's walk in a run without an end once its input has ended (a
#: drain, a followed file's ``#END``): public (when the operator stopped the input), never the data, as for the
#: streams' steps (``transforms.per_stream._clock``). Tests replace it.
_clock = time.time
#: How far past its worker's wall clock a period's timer may be before the key takes its input to have ended
#: (``OpenKeysFn.on_period_end``): the larger of one tick and this many seconds, a public constant. Every source
#: here caps its watermark at the wall clock, so in a live run a timer never fires past the clock; the slack
#: covers the clocks of two machines (the source's and this worker's) that disagree.
CLOCK_SLACK_SECONDS = 60.0
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


def run_key(ctx, key, state, last: int, events, upto: int, end: int | None, until_selected: bool = False) -> tuple:
    """Periods ``last + 1 .. min(upto, end)`` of one key (``end`` None: a run without an end) : ``events``
    ``(period, d_contributors, d_entries)`` (any order; those after ``upto`` are returned) -> ``(state, last
    period run, answers [(period, answer, stated bound)], events left)``. A key without state skips to its
    next event's period. ``until_selected``: stop at the selection period (the bounded cap's first pass)."""
    stop = upto if end is None else min(upto, end)
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
        if newly and until_selected:
            return state, p, [(p, answer, ctx.bound(state))], later
        if newly:
            _SELECTED.inc()
        if answer is not None:
            answers.append((p, answer, ctx.bound(state)))
    return state, p, answers, later


class _Setup(beam.DoFn):
    def __init__(self, params: SelectionParams, limit: KeyLimit, noise, spec, end: int | None, beta: float = 0.05):
        self.params, self.limit, self.noise, self.spec = params, limit, noise, spec
        self.end, self.beta = (None if end is None else int(end)), beta

    def setup(self):
        self.keys = PersonKeys(self.limit)
        noise = self.noise
        if not isinstance(noise, NoiseSource):  # (NoiseKey, ReleaseIdentity): the key is loaded on the worker
            key, release = noise
            noise = key.load().for_release(release)
        # the context the in-memory driver builds (its answers' budget included), without the node cache
        self.ctx = OpenKeyRelease(self.params, self.limit, noise, beta=self.beta).context
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
    period, pending events)``; one timer per period while the key has state.

    A selected key's counter keeps a window that grows with the periods (``sqrt_factorization`` over the
    run's horizon: about 690 KB after 43,200 periods; ``blt`` 2^13 rows): its state is written as a head
    in the cell and content-addressed chunks of ``chunk_bytes`` in the ``open_key_chunks`` bag
    (``transforms.core.foundation.state_chunks``, ``ChunkStore.write_plain``), so a period writes the
    chunks that changed and an event's arrival rewrites the head only. A key without a large array (a
    candidate, a young counter) keeps its cell as before."""

    KEY = ReadModifyWriteStateSpec("open_key", FastPrimitivesCoder())
    CHUNKS = BagStateSpec("open_key_chunks", BytesCoder())  # a selected key's chunks (digest + bytes)
    PERIOD_END = TimerSpec("period_end", TimeDomain.WATERMARK)
    # one counter a key (m = 1): 4 KiB chunks keep the head small (about 20 bytes a chunk) and a period's
    # writes near two chunks; the bag is written afresh past twice the state plus 64 KiB (a key's garbage
    # is bounded by its own state, whatever the number of keys)
    chunk_bytes = 1 << 12
    chunk_floor = 1 << 16

    def process(self, element, cell=_STATE(KEY), timer=_TIMER(PERIOD_END)):
        _, event = element
        state, last, timer_p, pending = _read(cell.read(), 5, (None, 0, None, ()))
        p = max(int(event[0]), last + 1)
        if self.end is not None and p > self.end:
            return  # after the configured end: nothing is released any more
        if timer_p is None or p < timer_p:
            timer_p = p
            _set(timer, self.spec.final_at(p))
        cell.write((OPEN_KEYS_CELL_VERSION, state, last, timer_p, (*pending, (p, *event[1:]))))

    def _input_ended(self, ts) -> int | None:
        """Without an end: the last period to release when the timer at ``ts`` fires past the wall clock (plus
        :func:`clock_slack`), else None. Every source here caps its watermark at the wall clock, so a timer
        fires past the clock only once the input has ended (a drain, ``#END``: Beam then moves the watermark to
        the end of time and fires every timer), when a key would otherwise walk one period a firing towards
        Beam's largest timestamp and the job would never finish. The key then releases the periods final by
        the clock plus the slack (``StreamSpec.final_tick``, the watermark's rule) and sets no timer: when the
        input was stopped decides it, never the data (its events wait in the cell; one arriving after all
        wakes the key, which then goes on from its last period)."""
        if self.end is not None:
            return None
        limit = _clock() + clock_slack(self.spec)
        if ts <= Timestamp.of(limit):
            return None
        return self.spec.final_tick(Timestamp.of(limit))

    @on_timer(PERIOD_END)
    def on_period_end(self, key=_KEY, ts=_TS, cell=_STATE(KEY), timer=_TIMER(PERIOD_END), chunks=_STATE(CHUNKS)):
        upto = self.spec.final_tick(ts)
        stop = self._input_ended(ts)
        head, last, _, pending = _read(cell.read(), 5, (None, 0, None, ()))
        if stop is not None:
            upto = max(min(upto, stop), last)  # never past the clock; a period already released stays released
        plain, store = ChunkStore.load_plain(head, chunks.read, self.chunk_bytes, self.chunk_floor)
        state, last, answers, later = run_key(self.ctx, key, key_state_from_plain(plain), last, pending, upto, self.end)
        for p, answer, bound in answers:
            yield (p, key, answer, bound)
        over = self.end is not None and last >= self.end  # without an end: never (no horizon to schedule to)
        if stop is not None:
            nxt = None  # the input has ended: no timer (a later event of this key sets one again)
        elif state is not None and not over:
            nxt = last + 1  # one period at a time: a timer is never set past the next period
        elif later:
            nxt = min(e[0] for e in later)
        else:
            nxt = None
        if (state is None and not later) or over:
            cell.clear()  # evicted, or the release is over: the key leaves no state
            chunks.clear()
            return
        write = store.write_plain(lambda: key_state_to_plain(state))
        if write.clear:
            chunks.clear()
        for entry in write.adds:
            chunks.add(entry)
        cell.write((OPEN_KEYS_CELL_VERSION, write.head, last, nxt, tuple(later)))
        if nxt is not None:
            _set(timer, self.spec.final_at(nxt))


class OpenKeysBoundedFn(_Setup):
    """Bounded stage 2: a key's events at once, periods 1 to the end. ``released`` (with ``max_keys``: the
    released keys, a side input from :class:`OpenKeysSelectBoundedFn`): a key not released is neither tested
    nor answered (operator compute only: its answers would be filtered out)."""

    def process(self, element, released=None):
        key, events = element
        if released is not None and key not in released:
            return
        _, _, answers, _ = run_key(self.ctx, key, None, 0, list(events), self.end, self.end)
        for p, answer, bound in answers:
            yield (p, key, answer, bound)


class OpenKeysSelectBoundedFn(_Setup):
    """The bounded cap's first pass (``max_keys``): a key's events at once -> ``(key, selection period)`` if its
    test passes, testing until then only (no answers). The same draws as stage 2's (the key's coordinates), so
    stage 2 selects it at the same period."""

    def process(self, element):
        key, events = element
        state, p, answers, _ = run_key(self.ctx, key, None, 0, list(events), self.end, self.end, until_selected=True)
        if answers:
            yield (key, p)


def admitted_keys(firsts, max_keys: int) -> frozenset:
    """``streams.max_keys`` over whole (bounded) answers: ``firsts`` ``(key, selection period)`` of every key
    whose selection test passed -> the released ones, period by period through :func:`admit_keys` (the
    core's rule: canonical order within a period; none once ``max_keys`` are released)."""
    by_period: dict = {}
    for key, p in firsts:
        by_period.setdefault(int(p), []).append(key)
    out: list = []
    for p in sorted(by_period):
        admitted, _ = admit_keys(by_period[p], len(out), max_keys)
        out += admitted
    if len(out) >= max_keys:
        _CAP_REACHED.inc()
    return frozenset(out)


class OpenKeysCapFn(beam.DoFn):
    """Streaming stage 3, ``streams.max_keys`` (the cap on released keys): one Beam key (the released keys,
    at most ``max_keys``, are public; the stage sees the selected keys' answers only, never a candidate).
    Buffers ``(period, key, answer, bound)`` until the period's answers are all in (half a tick after
    ``final_at(p)``, when stage 2 emits them), then admits a period's newly selected keys in the core's order
    (:func:`admit_keys`) and passes the released keys' answers on. State ``open_keys_cap``: ``(version,
    released keys in release order, the earliest pending period)``; ``open_keys_cap_next`` (round 8):
    ``(version, the earliest pending period)``, what an answer's arrival reads (it used to read
    ``open_keys_cap``, a tuple of every released key, once per answer: O(N^2) work per period for N released
    keys on a runner that decodes state on every read; ``benchmarks/bench_open_keys_cap.py``); absent in a
    state written before it (then ``open_keys_cap`` is read once); bag ``open_keys_cap_pending``; timer
    ``cap_flush``. Per period the stage does O(N) work for N released keys, all on one Beam key (one worker):
    ``docs/open_keys.md`` "The cap stage" says up to how many keys that is fine."""

    RELEASED = ReadModifyWriteStateSpec("open_keys_cap", FastPrimitivesCoder())
    NEXT = ReadModifyWriteStateSpec("open_keys_cap_next", FastPrimitivesCoder())
    PENDING = BagStateSpec("open_keys_cap_pending", FastPrimitivesCoder())
    FLUSH = TimerSpec("cap_flush", TimeDomain.WATERMARK)

    def __init__(self, spec, max_keys: int):
        self.spec, self.max_keys = spec, int(max_keys)

    def _flush_at(self, p: int):
        return self.spec.tick_middle(p + self.spec.lateness_ticks + 2)  # half a tick after final_at(p)

    def process(
        self, element, cell=_STATE(RELEASED), pending=_STATE(PENDING), timer=_TIMER(FLUSH), nxt_cell=_STATE(NEXT)
    ):
        _, a = element
        pending.add(a)
        small = nxt_cell.read()
        if small is None:  # a state written before open_keys_cap_next (or the first answer): read the big cell once
            released, timer_p = _read(cell.read(), 3, ((), None))
        else:
            (timer_p,) = _read(small, 2, (None,))
        if timer_p is None or a[0] < timer_p:  # a timer holds one time: keep the earliest
            _set(timer, self._flush_at(a[0]))
            timer_p = a[0]
            if small is None:
                cell.write((OPEN_KEYS_CELL_VERSION, released, timer_p))
        if small is None or timer_p != small[1]:
            nxt_cell.write((OPEN_KEYS_CELL_VERSION, timer_p))

    @on_timer(FLUSH)
    def on_flush(
        self, ts=_TS, cell=_STATE(RELEASED), pending=_STATE(PENDING), timer=_TIMER(FLUSH), nxt_cell=_STATE(NEXT)
    ):
        released = list(_read(cell.read(), 3, ((), None))[0])
        known = set(released)
        due, later = [], []
        for a in pending.read():
            (due if self._flush_at(a[0]) <= ts else later).append(a)
        pending.clear()
        for a in later:
            pending.add(a)
        nxt = min(a[0] for a in later) if later else None
        if nxt is not None:
            _set(timer, self._flush_at(nxt))
        by_period: dict = {}
        for a in due:
            by_period.setdefault(a[0], []).append(a)
        full = len(released) >= self.max_keys
        for p in sorted(by_period):
            new = {a[1] for a in by_period[p]} - known
            admitted, _ = admit_keys(new, len(released), self.max_keys)
            released += admitted
            known.update(new)  # a key refused by the cap stays refused (nothing is admitted after the cap)
            keep = set(released)
            for a in sorted(by_period[p], key=lambda a: repr(a[1])):
                if a[1] in keep:
                    yield a
        if not full and len(released) >= self.max_keys:
            _CAP_REACHED.inc()
        cell.write((OPEN_KEYS_CELL_VERSION, tuple(released), nxt))
        nxt_cell.write((OPEN_KEYS_CELL_VERSION, nxt))


def clock_slack(spec) -> float:
    """Seconds past the wall clock a key's timer may fire before its input is taken to have ended: the larger
    of one tick and :data:`CLOCK_SLACK_SECONDS` (public configuration and a constant)."""
    return max(float(spec.tick_seconds), CLOCK_SLACK_SECONDS)


def _set(timer, ts) -> None:
    if ts < MAX_TS:  # past Beam's time range (a run without an end): never scheduled
        timer.set(ts)


def _read(cell, n: int, default: tuple) -> tuple:
    if cell is None:
        return default
    if type(cell) is not tuple or len(cell) != n or cell[0] != OPEN_KEYS_CELL_VERSION:
        raise StateError(f"not an open keys cell of version {OPEN_KEYS_CELL_VERSION}")  # no payload
    return cell[1:]


class ReleaseOpenKeys(beam.PTransform):
    """``(person, (tick, Update))`` -> ``(period, key, answer, stated bound)`` (main) and dead letters
    (``dead_letters``) (module docstring). ``spec``: the :class:`~transforms.spec.StreamSpec` (its
    ``closes_at``, ``closed_tick``, ``final_at``, ``final_tick``); the last period is the selection's horizon
    (``params.horizon``, the configured end; None: a run without an end, streaming only: every key with state
    has one timer, at its next period, never at a horizon). ``noise``: a NoiseSource, or ``(NoiseKey,
    ReleaseIdentity)`` (the pipelines: the key is loaded on the workers, never put in the graph). ``beta``:
    the failure probability of the stated bounds. ``max_keys``: the cap on released keys (None: none;
    :func:`~transforms.core.selection.release.admit_keys`). Bounded: a test-only pass finds every key's
    selection period, the released keys follow, and stage 2 tests and answers those only (round 8). Streaming:
    applied after stage 2 (stage 2 keeps testing and answering keys past the cap, operator compute only; only
    released keys' answers leave the step: the per-key stage cannot learn of the cap without a feedback loop)."""

    def __init__(
        self,
        params: SelectionParams,
        limit: KeyLimit,
        noise,
        spec,
        bounded: bool,
        *,
        beta: float = 0.05,
        max_keys: int | None = None,
    ):
        super().__init__()
        if params.horizon is None and bounded:
            raise ValueError("open keys on a bounded input need a horizon (the configured end)")
        self.args = (params, limit, noise, spec, params.horizon, beta)
        self.bounded, self.spec, self.max_keys = bounded, spec, max_keys

    def expand(self, pcoll):
        if self.bounded:
            grouped = pcoll | "GroupOpenKeyPersons" >> beam.GroupByKey()
            persons = grouped | "OpenKeyPersons" >> beam.ParDo(OpenKeyPersonsBoundedFn(*self.args)).with_outputs(
                DEAD, main="events"
            )
            by_key = persons.events | "GroupOpenKeys" >> beam.GroupByKey()
            if self.max_keys is None:
                answers = by_key | "OpenKeys" >> beam.ParDo(OpenKeysBoundedFn(*self.args))
            else:  # round 8: the released keys first (a test-only pass), then only they are answered
                cap = self.max_keys
                firsts = (
                    by_key
                    | "OpenKeysFirst" >> beam.ParDo(OpenKeysSelectBoundedFn(*self.args))
                    | "OpenKeysSelectedAt" >> beam.CombinePerKey(min)
                    | "OpenKeysAllSelected" >> beam.combiners.ToList()
                    | "OpenKeysReleased" >> beam.Map(admitted_keys, cap)
                )
                released = beam.pvalue.AsSingleton(firsts)
                answers = by_key | "OpenKeys" >> beam.ParDo(OpenKeysBoundedFn(*self.args), released=released)
                answers = answers | "OpenKeysCap" >> beam.Filter(lambda a, keys: a[1] in keys, keys=released)
        else:
            persons = pcoll | "OpenKeyPersons" >> beam.ParDo(OpenKeyPersonsFn(*self.args)).with_outputs(
                DEAD, main="events"
            )
            answers = persons.events | "OpenKeys" >> beam.ParDo(OpenKeysFn(*self.args))
            if self.max_keys is not None:
                answers = (
                    answers
                    | "OpenKeysCapKey" >> beam.Map(lambda a: (0, a))
                    | "OpenKeysCap" >> beam.ParDo(OpenKeysCapFn(self.spec, self.max_keys))
                )
        return {"answers": answers, DEAD: persons[DEAD]}
