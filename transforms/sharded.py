# ruff: noqa: B008 - Beam's stateful DoFn idiom: state and timer parameters are declared as defaults
"""The streaming entry registry in hash shards (issue 30): one key and one event-time timer per
``(stream, shard)``, not per entry.

``ResolveEntriesFn`` keys its state and its timer by ``(stream, entry id)``. On a runner whose state lives
across a process boundary (Flink's portable runner, Dataflow), every entry is a key of its own: its state is
read over the Fn API the first time a bundle touches it, and every entry sets and fires its own timer. With
37,652 entries and 90,912 updates that made the registry the slowest step of a streaming job on Flink
(``docs/flink.md``). Here an entry's state lives in its shard's value (``shard_of``: a CRC-32 of the entry id,
a public function of the id and the configured number of shards); a shard is a key whose state the SDK
worker keeps cached across bundles, and whose one timer fires at the close of the earliest tick any of its
entries has pending.

What an entry sees is what ``ResolveEntriesFn`` gives it, update for update:

* **Admission** (the late rule, ``StreamSpec.late_policy``) reads the entry's ``last`` (the last tick the
  registry closed for it), which changes only when the registry resolves the entry. ``process`` only appends
  the update to the shard's ``arrived`` bag and moves the timer earlier; the next firing of the shard admits
  every arrival first, with the ``last`` each entry had when the update arrived (no firing came between),
  then resolves. A late update (its tick at or before ``last``) set the timer to its own, closed, tick: the
  firing comes before the one that would have resolved it, so it waits at ``last + 1`` as it would have, or
  leaves as a dead letter (``late_policy: dead_letter``) from that firing instead of from ``process``.
* **Resolution**: the timer is set for the earliest tick pending in the shard; a firing at the close of tick
  ``t`` resolves exactly the updates pending at ``t`` (nothing earlier is pending), entry by entry in
  ``update_order``, and sets each resolved entry's ``last`` to ``t``: the entries whose own timers would have
  fired at that close. An entry deleted with nothing pending is dropped from the shard (its ``last`` back to
  0), as ``ResolveEntriesFn`` clears its state.

So the tick aggregates, the dead letters (their reasons and records) and every entry's state are the same
as the per-entry registry's; only which key holds an entry changes. The number of shards decides no release
time and no noise: releases still happen when the watermark passes a tick's close (public), and the shards
are a function of the entry id alone. Aggregates leave summed per (stream, tick) over the bundle, as
``ResolveEntriesFn`` sends them (its ``finish_bundle``).

Not on the DirectRunner's gated path (``transforms.streaming.counts_gate``): that runner does not hold the
release step's watermark for this step's timers, and the per-entry registry's counts make up for it there.
State layout (stored in checkpoints and savepoints; a job restored from a savepoint of the per-entry registry
must keep it: ``registry_shards: 0``)::

  arrived    bag of (entry id, update)                 updates not yet admitted
  shard      (entries, waiting)                       entries: entry id -> (state, last, pending count)
                                                      waiting: tick -> ((entry id, update), ...) admitted
  timer_tick the tick the timer is set for
"""

from __future__ import annotations

import typing
import zlib

import apache_beam as beam
from apache_beam.coders import FastPrimitivesCoder, VarIntCoder
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec, TimerSpec, on_timer

from transforms.common import dead_letter, in_update_order, resolve_updates
from transforms.per_stream import CATCH_UP_TICKS
from transforms.streaming import ResolveEntriesFn

__all__ = ["DEFAULT_SHARDS", "MAX_SHARDS", "shard_of", "KeyByShard", "ResolveShardsFn", "check_shards"]

#: Shards per stream when the configuration names none (``registry_shards``): enough keys for a runner's
#: parallelism, few enough that each shard's state stays warm in the SDK worker's cache.
DEFAULT_SHARDS = 16
MAX_SHARDS = 1 << 16


def check_shards(shards) -> int:
    """``shards`` as an int in ``[0, MAX_SHARDS]`` (0: the per-entry registry), else a ``ValueError`` that says
    what to write."""
    if isinstance(shards, bool) or not isinstance(shards, int) or not 0 <= shards <= MAX_SHARDS:
        raise ValueError(
            f"registry_shards must be an integer from 0 (one key per entry) to {MAX_SHARDS}; got {shards!r}"
        )
    return shards


def shard_of(entry_id, shards: int) -> int:
    """The shard of an entry: CRC-32 of its id's UTF-8 bytes (lone surrogates passed through), modulo ``shards``.
    A public function of the id (never Python's per-process ``hash``: every worker must agree)."""
    data = entry_id.encode("utf-8", "surrogatepass") if isinstance(entry_id, str) else repr(entry_id).encode()
    return zlib.crc32(data) % shards


class KeyByShard(beam.DoFn):
    """``((stream, entry id), update)`` -> ``((stream, shard), (entry id, update))``."""

    def __init__(self, shards: int):
        self.shards = check_shards(shards)
        if not shards:
            raise ValueError("KeyByShard needs at least one shard")

    def process(self, element):
        (stream, entry_id), value = element
        yield (stream, shard_of(entry_id, self.shards)), (entry_id, value)


@beam.typehints.with_output_types(tuple[typing.Any, typing.Any])
class ResolveShardsFn(ResolveEntriesFn):
    """The entry registry keyed by ``(stream, shard)`` (module docstring). Outputs as ``ResolveEntriesFn``
    without counts: ``(stream, aggregates)`` per stream and bundle (``per_stream``) or ``((stream, tick),
    aggregate)`` for the stateful per-tick merge, and dead letters on ``DEAD``."""

    ARRIVED = BagStateSpec("arrived", FastPrimitivesCoder())
    SHARD = ReadModifyWriteStateSpec("shard", FastPrimitivesCoder())
    TIMER_TICK = ReadModifyWriteStateSpec("timer_tick", VarIntCoder())
    TICK_END = TimerSpec("tick_end", TimeDomain.WATERMARK)  # a timer spec takes one callback: declared again
    CATCH_UP = TimerSpec("catch_up", TimeDomain.WATERMARK)  # the next point of the public grid
    catch_up_ticks = CATCH_UP_TICKS  # the grid (the per-stream step's, ``transforms.per_stream``)
    # the callbacks' parameters (Beam reads them from the defaults), named once
    _KEY, _TS = beam.DoFn.KeyParam, beam.DoFn.TimestampParam
    _ARRIVED, _SHARD, _TICK = (beam.DoFn.StateParam(s) for s in (ARRIVED, SHARD, TIMER_TICK))
    _TIMER, _CATCH_UP = beam.DoFn.TimerParam(TICK_END), beam.DoFn.TimerParam(CATCH_UP)

    def __init__(self, spec, domain_sizes, deletions_allowed, per_stream=True, max_mutations=None):
        super().__init__(spec, domain_sizes, deletions_allowed, per_stream, max_mutations)

    def start_bundle(self):
        super().start_bundle()
        # Per key, what this bundle read or wrote: the timer's tick and the shard's (entries, waiting), our own
        # copies. A key's state changes only through this DoFn within a bundle, so the copies stay exact until
        # the bundle ends; each is read (a round trip to the runner, and a decode) once per bundle, not once per
        # element or firing (Beam 2.62's state cache is off unless ``--max_cache_memory_usage_mb`` is set).
        self._ticks: dict = {}
        self._shards: dict = {}

    def process(self, element, arrived=_ARRIVED, timer_tick=_TICK, timer=_TIMER, catch_up=_CATCH_UP):
        key, arrival = element  # (entry id, (tick, seq, op, item, event_time, raw))
        arrived.add(arrival)
        tick = arrival[1][0]
        ticks = self._ticks
        current = ticks[key] if key in ticks else timer_tick.read()
        if current is None or tick < current:  # a timer holds one time: keep the earliest
            self._set_timers(tick, timer_tick, timer, catch_up)
            current = tick
        ticks[key] = current

    def _set_timers(self, tick: int, timer_tick, timer, catch_up) -> None:
        """Both timers for ``tick``, the earliest tick pending: the tick timer at its close, the catch-up timer
        at the close of the first point of the public grid at or after it (``CATCH_UP_TICKS``)."""
        timer_tick.write(tick)
        timer.set(self.spec.closes_at(tick))
        grid = self.catch_up_ticks
        point = ((max(tick, 1) - 1) // grid + 1) * grid
        end = self.spec.end_tick  # the configured end is public too (``per_stream.set_catch_up``)
        if end is not None and tick <= end:
            point = min(point, end)
        catch_up.set(self.spec.closes_at(point))

    @on_timer(TICK_END)
    @on_timer(CATCH_UP)
    def on_tick_end(
        self, key=_KEY, ts=_TS, arrived=_ARRIVED, shard=_SHARD, timer_tick=_TICK, timer=_TIMER, catch_up=_CATCH_UP
    ):
        """Either timer. The tick timer fires at the close of the earliest pending tick; the catch-up timer at
        the close of a grid point, when every tick up to it is closed (the watermark passed it: a backlog, a
        replay, a restart). Either resolves every pending tick up to its own, one tick after the other, as
        one firing per tick would have with no arrival between them (arrivals are admitted first, then
        tick t resolves the updates pending at t and sets their entries' ``last`` to t), so which timer
        fired changes nothing but how many ticks one firing covers (one per grid point of a backlog instead
        of one per tick: a round trip to the SDK worker and a read of the shard each)."""
        stream = key[0]
        upto = self.spec.closed_tick(ts)
        kept = self._shards.get(key)
        if kept is None:  # first use in this bundle: copies (a cached state value must not change under Beam)
            stored = shard.read()
            kept = self._shards[key] = (dict(stored[0]), dict(stored[1])) if stored else ({}, {})
        entries, waiting = kept
        for entry_id, value in arrived.read():  # admitted first, each with its entry's ``last`` as it arrived
            state, last, count = entries.get(entry_id, (None, 0, 0))
            tick = value[0]
            if tick <= last:  # late (``ResolveEntriesFn._admit``: decided per entry, by public ticks)
                if self.spec.late_policy == "dead_letter":
                    yield beam.pvalue.TaggedOutput(self.DEAD, dead_letter("late", (stream, entry_id), value))
                    continue
                tick = last + 1
                value = (tick, *value[1:])
            entries[entry_id] = (state, last, count + 1)
            waiting[tick] = (*waiting.get(tick, ()), (entry_id, value))
        arrived.clear()
        acc = self.acc.get(stream)
        if acc is None:
            acc = self.acc[stream] = {}
        for tick in sorted(t for t in waiting if t <= upto):  # each closed tick as its own firing would
            due: dict = {}  # entry id -> its updates pending at this tick
            for entry_id, value in waiting.pop(tick):
                due.setdefault(entry_id, []).append(value)
            for entry_id, now in due.items():
                state, last, count = entries[entry_id]
                now = in_update_order(now)
                state, _, dead, accepted = resolve_updates(
                    state, entry_id, now, self.domain_sizes, self.deletions_allowed, self.max_mutations, acc
                )
                self.accepted += accepted
                for reason, value in dead:
                    yield beam.pvalue.TaggedOutput(self.DEAD, dead_letter(reason, (stream, entry_id), value))
                self._settle(entries, entry_id, state, max(tick, last), count - len(now))
        if entries or waiting:
            shard.write((entries, waiting))
        else:
            shard.clear()
        nxt = min(waiting) if waiting else None
        if nxt is not None:
            self._set_timers(nxt, timer_tick, timer, catch_up)
        else:
            timer_tick.clear()
        self._ticks[key] = nxt

    def _settle(self, entries: dict, entry_id, state, last: int, count: int) -> None:
        """An entry after a resolution: dropped when deleted with nothing pending (no state kept, its ``last``
        back to 0, as ``ResolveEntriesFn`` clears its cell), else kept with the tick just closed for it."""
        if state is None and not count:
            entries.pop(entry_id, None)
        else:
            entries[entry_id] = (state, last, count)
