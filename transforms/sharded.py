# ruff: noqa: B008 - Beam's stateful DoFn idiom: state and timer parameters are declared as defaults
"""The streaming entry registry in hash shards (issue 30): one key per ``(stream, shard)``, not per entry, and
one event-time timer per shard and pending tick.

``ResolveEntriesFn`` keys its state and its timer by ``(stream, entry id)``. On a runner whose state lives
across a process boundary (Flink's portable runner, Dataflow), every entry is a key of its own: its state is
read over the Fn API the first time a bundle touches it (Beam 2.62 keeps no user state across reads unless
``--max_cache_memory_usage_mb`` is set), and every entry sets and fires its own timer. With 37,652 entries
and 100,005 updates that made the registry the slowest step of a streaming job on Flink (``docs/flink.md``).
Here an entry's state lives in its shard's value (``shard_of``: a CRC-32 of the entry id modulo the
configured number, a public function of the id), read once per bundle and shard.

What an entry sees:

* **Admission** (``process``, the late rule of ``StreamSpec.late_policy``) is ``ResolveEntriesFn._admit``'s:
  an update at or before its entry's ``last`` (the last tick the registry closed for that entry) is late:
  a dead letter, or moved to ``last + 1``; decided from the entry's own records and public ticks only.
* **Resolution**: each tick pending in a shard has its own timer (a dynamic timer tag: the tick), set when
  the tick first becomes pending there, at its close (``StreamSpec.closes_at``). A firing resolves the
  updates pending at its tick, entry by entry in ``update_order``, and sets each resolved entry's ``last``
  to that tick; an entry deleted with nothing pending is dropped (``last`` back to 0), as
  ``ResolveEntriesFn`` clears its cell. Every tick that was pending when the watermark passed its close
  fires in that watermark move's first round of firings, whichever other entries share the shard: no
  entry's data moves another entry's resolution (a single shard timer at the earliest pending tick would:
  the review of this module found it, ``tests/test_sharded_registry.py`` keeps the case).

So with the updates on time, and whenever no update arrives between two rounds of firings of one watermark
move, the tick aggregates (per stream and tick: a bundle may carry them differently), the dead letters and every
entry's state are the per-entry registry's (``tests/test_sharded_registry.py`` drives both through random
schedules, also with a round's timers fired in reverse order: an entry's earlier pending ticks are then resolved
first). The one difference: an entry with several pending ticks closed by one watermark move has them all
resolved in that move's first round, where the per-entry registry resolves one per round (its timer holds one
time); an update of that entry arriving between those rounds, behind the watermark, is judged against the later
``last``. Both are decided per entry. This rests on the runner processing the elements that arrived before a
watermark move before that move's firings, and later elements after them (an update joining a tick that
another entry made pending then fires with it, in the round its own timer would have fired): Flink's portable
runner does (tested end to end, ``tests/test_flink.py``); Dataflow was not tried here.
The number of shards decides no release time and no noise: releases still follow the watermark and the
ticks, and the shards are a function of the entry id alone. Aggregates leave summed per (stream, tick) over
the bundle, as ``ResolveEntriesFn`` sends them (its ``finish_bundle``).

Costs: a shard's value holds its live entries (~31 bytes each for the demo's records), decoded once and
encoded once per bundle that touches the shard, so keep live entries per shard in the thousands
(``registry_shards`` >= live entries per stream / 5,000); the shards also bound the step's parallelism
(shards x streams keys).

Not on the DirectRunner's gated path (``transforms.streaming.counts_gate``): that runner does not hold the
release step's watermark for this step's timers, and the per-entry registry's counts make up for it there.
State layout (stored in checkpoints and savepoints; a job restored from a savepoint of the per-entry registry
keeps ``registry_shards: 0``; the number of shards is stored and a restore with another number fails)::

  shard      (shards, entries, waiting)   entries: entry id -> (state, last, pending count)
                                          waiting: tick -> [(entry id, update), ...] admitted, pending
  tick_end   a timer per pending tick, its dynamic tag the tick
"""

from __future__ import annotations

import typing
import zlib

import apache_beam as beam
from apache_beam.coders import FastPrimitivesCoder
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import ReadModifyWriteStateSpec, TimerSpec, on_timer

import transforms.state_cache  # noqa: F401  (user state: the SDK's cache without its scan of every module)
from transforms.common import dead_letter, in_update_order, resolve_updates
from transforms.streaming import ResolveEntriesFn

__all__ = ["DEFAULT_SHARDS", "MAX_SHARDS", "shard_of", "KeyByShard", "ResolveShardsFn", "check_shards"]

#: Shards per stream when the configuration names none (``registry_shards``): enough keys for a runner's
#: parallelism and for registries of ~10^5 live entries a stream, few enough that a watermark move fires few
#: timers (one per shard and pending tick; 4 / 16 / 64 shards: 22.3 / 25.2 / 32.1 s for 100,005 updates on the
#: embedded Flink, ``docs/flink.md``).
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
    """The entry registry keyed by ``(stream, shard)`` (module docstring), for ``shards`` shards per stream.
    Outputs as ``ResolveEntriesFn`` without counts: ``(stream, aggregates)`` per stream and bundle
    (``per_stream``) or ``((stream, tick), aggregate)`` for the stateful per-tick merge, and dead letters on
    ``DEAD``."""

    SHARD = ReadModifyWriteStateSpec("shard", FastPrimitivesCoder())
    TICK_END = TimerSpec("tick_end", TimeDomain.WATERMARK)  # a timer spec takes one callback: declared again
    # the callbacks' parameters (Beam reads them from the defaults), named once
    _KEY, _TS, _TAG = beam.DoFn.KeyParam, beam.DoFn.TimestampParam, beam.DoFn.DynamicTimerTagParam
    _SHARD, _TIMER = beam.DoFn.StateParam(SHARD), beam.DoFn.TimerParam(TICK_END)

    def __init__(self, spec, domain_sizes, deletions_allowed, per_stream=True, max_mutations=None, shards=1):
        super().__init__(spec, domain_sizes, deletions_allowed, per_stream, max_mutations)
        self.shards = check_shards(shards)

    def start_bundle(self):
        super().start_bundle()
        # Per key, the shard's (entries, waiting) this bundle read or wrote: our own copies. A key's state
        # changes only through this DoFn within a bundle, so they stay exact until the bundle ends; the value is
        # read (a round trip to the runner, and a decode) once per bundle and key, not per element or firing.
        self._shards: dict = {}

    def _load(self, key, shard) -> tuple:
        kept = self._shards.get(key)
        if kept is None:
            stored = shard.read()
            if stored is None:
                kept = ({}, {})
            else:
                shards, entries, waiting = stored
                if shards != self.shards:
                    raise ValueError(
                        f"the registry's state was written with registry_shards: {shards}; this job is configured "
                        f"with {self.shards}. An entry's shard depends on that number: restore with the same "
                        "value (or start a new release)"
                    )
                # copies: a state value must not change under Beam's feet (its cache may hold the same object)
                kept = (dict(entries), {t: list(v) for t, v in waiting.items()})
            self._shards[key] = kept
        return kept

    def process(self, element, shard=_SHARD, timer=_TIMER):
        key, (entry_id, value) = element  # ((stream, shard), (entry id, (tick, seq, op, item, event_time, raw)))
        entries, waiting = self._load(key, shard)
        state, last, count = entries.get(entry_id, (None, 0, 0))
        tick = value[0]
        if tick <= last:  # late: ``ResolveEntriesFn._admit``'s rule, per entry, by public ticks
            if self.spec.late_policy == "dead_letter":
                yield beam.pvalue.TaggedOutput(self.DEAD, dead_letter("late", (key[0], entry_id), value))
                return
            tick = last + 1
            value = (tick, *value[1:])
        entries[entry_id] = (state, last, count + 1)
        pending = waiting.get(tick)
        if pending is None:  # the tick's first update in this shard: its timer, at its close
            waiting[tick] = [(entry_id, value)]
            timer.set(self.spec.closes_at(tick), dynamic_timer_tag=str(tick))
        else:
            pending.append((entry_id, value))
        shard.write((self.shards, entries, waiting))

    @on_timer(TICK_END)
    def on_tick_end(self, key=_KEY, ts=_TS, tag=_TAG, shard=_SHARD, timer=_TIMER):
        """The close of one pending tick of the shard (its dynamic tag): its updates resolved, entry by entry."""
        stream, tick = key[0], int(tag)
        entries, waiting = self._load(key, shard)
        popped = waiting.pop(tick, ())  # (entry id, update) pairs pending at this tick
        due = {entry_id for entry_id, _ in popped}
        acc = self.acc.get(stream)
        if acc is None:
            acc = self.acc[stream] = {}
        # A runner that delivers a key's timers out of timestamp order (Flink's queue is ordered; Beam does not
        # promise it across dynamic tags) could fire this tick before an earlier one of the same entries: their
        # own earlier ticks are resolved first, in order, as the per-entry registry resolves everything pending
        # up to its firing. Other entries' earlier ticks wait for their own timers. In order, nothing is earlier.
        for earlier in sorted(t for t in waiting if t < tick) if due else ():
            mine = [u for u in waiting[earlier] if u[0] in due]
            if mine:
                rest = [u for u in waiting[earlier] if u[0] not in due]
                if rest:
                    waiting[earlier] = rest
                else:
                    del waiting[earlier]  # its timer, when it fires, finds nothing
                yield from self._resolve(stream, earlier, mine, entries, acc)
        yield from self._resolve(stream, tick, popped, entries, acc)
        if entries or waiting:
            shard.write((self.shards, entries, waiting))
        else:
            shard.clear()

    def _resolve(self, stream, tick: int, pending: list, entries: dict, acc: dict):
        """Resolve ``pending`` (``(entry id, update)`` pairs of ``tick``), entry by entry in ``update_order``;
        yields the dead letters."""
        due: dict = {}
        for entry_id, value in pending:
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

    def _settle(self, entries: dict, entry_id, state, last: int, count: int) -> None:
        """An entry after a resolution: dropped when deleted with nothing pending (no state kept, its ``last``
        back to 0, as ``ResolveEntriesFn`` clears its cell), else kept with the tick just closed for it."""
        if state is None and not count:
            entries.pop(entry_id, None)
        else:
            entries[entry_id] = (state, last, count)
