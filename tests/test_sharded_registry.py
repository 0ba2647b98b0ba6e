"""The streaming entry registry in hash shards (``transforms.sharded``, issue 30) against the per-entry registry
(``transforms.streaming.ResolveEntriesFn``), driven in memory by one schedule of arrivals and watermark moves.

The driver is a small event-time runner: each key has its state cells and one timer; a watermark move fires,
in timestamp order, every timer at or before it (a callback may set its timer again, also in the past: it
fires in the same move), then ends the bundle. Both registries see the same arrivals in the same order
between the same moves. They must give, move by move, the same tick aggregates (so every update is resolved
at the same watermark, at the same tick), the same dead letters (reasons and records), and at the end the
same state of every entry. Schedules are random: on-time, late (after their tick's close, under both late
policies), out of order within an entry, watermark jumps of many ticks, inserts/deletes/upserts with
rejections, a mutation limit, insertion-only. The broken twins must differ."""

from __future__ import annotations

import pickle
import random
from pathlib import Path

import pytest
from test_beam_releases import _Timer, _Value

import transforms.sharded as sharded_module
from transforms.sharded import (
    DEFAULT_SHARDS,
    MAX_SHARDS,
    KeyByShard,
    ResolveShardsFn,
    check_shards,
    shard_of,
)
from transforms.spec import StreamSpec
from transforms.streaming import ResolveEntriesFn

DOMAINS = (1, 4)  # a count (one cell) and a 4-cell histogram: items (0, cell)


class _Timers:
    """A timer family: one timer per dynamic tag (what Beam keeps for ``timer.set(ts, dynamic_timer_tag=...)``)."""

    def __init__(self):
        self.at = {}

    def set(self, ts, dynamic_timer_tag=""):
        self.at[dynamic_timer_tag] = ts


class _CachedValue:
    """A ReadModifyWrite cell as Beam's state cache keeps it: a read hands out the stored object itself, which
    the DoFn must not change in place (the cache would then hold a value no commit wrote); checked at the next
    access."""

    def __init__(self):
        self.value, self._handed = None, None

    def _check(self):
        if self._handed is not None:
            assert pickle.dumps(self.value) == self._handed, "a value read from state was changed in place"
            self._handed = None

    def read(self):
        self._check()
        if self.value is not None:
            self._handed = pickle.dumps(self.value)
        return self.value

    def write(self, v):
        self._check()
        self.value = v

    def clear(self):
        self._check()
        self.value = None


class _Registry:
    """One registry DoFn with its keyed cells and timers (``reverse``: a round fires its timers in descending
    timestamp order, which Beam does not rule out across dynamic timer tags)."""

    def __init__(self, fn, sharded: bool, shards: int = 3, reverse: bool = False):
        self.fn, self.sharded, self.shards, self.reverse = fn, sharded, shards, reverse
        self.keys: dict = {}
        self.dead: list = []
        self.accepted = 0
        fn.start_bundle()

    def _cells(self, key):
        if key not in self.keys:
            self.keys[key] = (
                {"shard": _CachedValue(), "timer": _Timers()} if self.sharded else {"meta": _Value(), "timer": _Timer()}
            )
        return self.keys[key]

    def _take(self, outs):
        for o in outs or ():
            assert type(o).__name__ == "TaggedOutput" and o.tag == "dead_letters", o
            d = o.value
            self.dead.append((d.reason, d.stream, repr(d.record)))

    def arrive(self, stream, entry_id, value):
        if self.sharded:
            key = (stream, shard_of(entry_id, self.shards))
            cells = self._cells(key)
            self._take(self.fn.process((key, (entry_id, value)), shard=cells["shard"], timer=cells["timer"]))
        else:
            key = (stream, entry_id)
            cells = self._cells(key)
            self._take(self.fn.process((key, value), meta=cells["meta"], timer=cells["timer"]))

    def _due(self, wm) -> list:
        out = []
        for k, c in self.keys.items():
            timers = c["timer"].at
            if self.sharded:
                out += [(ts, repr(k), tag, k) for tag, ts in timers.items() if ts <= wm]
            elif timers is not None and timers <= wm:
                out.append((timers, repr(k), None, k))
        return sorted(out)

    def advance(self, wm, rounds: int | None = None) -> list:
        """Move the watermark to ``wm``: in rounds, as Flink's portable runner does, each round fires (in
        timestamp order) the timers at or before ``wm`` that were set before it began; a timer set during a
        round waits for the next one. ``rounds``: stop after that many (arrivals may then come between rounds
        of one move). Returns the bundle's aggregates."""
        done = 0
        while rounds is None or done < rounds:
            due = self._due(wm)
            if not due:
                break
            if self.reverse:
                due.reverse()
            done += 1
            for ts, _, tag, key in due:
                cells = self.keys[key]
                if self.sharded:
                    if cells["timer"].at.get(tag) != ts:
                        continue
                    del cells["timer"].at[tag]
                    self._take(self.fn.on_tick_end(key=key, ts=ts, tag=tag, shard=cells["shard"], timer=cells["timer"]))
                else:
                    if cells["timer"].at != ts:
                        continue
                    cells["timer"].at = None
                    self._take(self.fn.on_tick_end(key=key, ts=ts, **cells))
        out = []
        self.accepted += self.fn.accepted  # counted per bundle (``updates_accepted``)
        for wv in self.fn.finish_bundle():
            stream, aggs = wv.value
            for tick, ins, dele, n in aggs:
                out.append((stream, tick, _frozen(ins), _frozen(dele), n, float(wv.timestamp)))
        self.fn.start_bundle()
        return sorted(out)

    def entries(self) -> dict:
        """(stream, entry id) -> (state, last) of every entry the registry keeps."""
        out = {}
        for key, cells in self.keys.items():
            if self.sharded:
                stored = cells["shard"].read()
                for entry_id, (state, last, count) in (stored[1] if stored else {}).items():
                    out[(key[0], entry_id)] = (state, last, count)
            else:
                stored = cells["meta"].read()
                if stored is not None:
                    out[key] = (stored[0], stored[1], len(stored[3]))
        return out


def _frozen(d):
    return tuple(sorted(d.items())) if isinstance(d, dict) else d


def _schedule(rng, spec, n_updates=300, n_entries=25, streams=("a", "b"), n_ticks=30, odd_ids=True):
    """Arrivals and watermark moves: ``[("u", stream, entry, value) | ("w", watermark)]`` (``odd_ids``: a few
    updates of an entry whose id holds a lone surrogate, which ``shard_of`` takes and Beam's coders refuse)."""
    s = spec.tick_seconds
    ups = []
    for i in range(n_updates):
        tick = rng.randint(1, n_ticks)
        et = spec.origin + (tick - 1) * s + rng.random() * s * 0.999
        op = rng.choice(("insert", "insert", "delete", "upsert"))
        item = None if op == "delete" and rng.random() < 0.8 else (0, rng.randrange(5))  # cell 4: out of range
        entry = f"e{rng.randrange(n_entries)}" if rng.random() > 0.02 or not odd_ids else "\ud800x"
        delay = rng.expovariate(1 / (0.6 * s)) if rng.random() > 0.12 else rng.uniform(2 * s, 12 * s)  # some late
        value = (tick, rng.randrange(2**40) if rng.random() > 0.05 else 7, op, item, et, f"line {i}")
        ups.append((et + delay, rng.choice(streams), entry, value))
    ups.sort(key=lambda u: u[0])
    events, wm = [], spec.origin
    for arrival, stream, entry, value in ups:
        while wm + s < arrival - rng.random() * s:  # the watermark trails arrivals; sometimes jumps
            wm += s * (rng.choice((0.5, 1, 1, 2)) if rng.random() > 0.1 else rng.randint(3, 15))
            events.append(("w", wm))
        events.append(("u", stream, entry, value))
    events.append(("w", spec.origin + (n_ticks + 40) * s))
    return events


def _run(
    events, spec, deletions_allowed=True, max_mutations=None, sharded_cls=ResolveShardsFn, shards=3, reverse=False
):
    per_entry = _Registry(ResolveEntriesFn(spec, DOMAINS, deletions_allowed, True, max_mutations), False)
    shard_fn = sharded_cls(spec, DOMAINS, deletions_allowed, True, max_mutations, shards=shards)
    sharded = _Registry(shard_fn, True, shards, reverse=reverse)
    moves = []
    for ev in events:
        if ev[0] == "u":
            per_entry.arrive(*ev[1:])
            sharded.arrive(*ev[1:])
        else:
            moves.append((per_entry.advance(ev[1]), sharded.advance(ev[1])))
    return per_entry, sharded, moves


CASES = [
    ("current", 0.0, True, None),
    ("current", 10.0, True, None),
    ("dead_letter", 0.0, True, None),
    ("dead_letter", 10.0, True, 2),
    ("current", 0.0, False, None),  # insertion-only: deletions rejected
    ("current", 20.0, True, 3),
]


@pytest.mark.parametrize("policy, lateness, deletions, mutations", CASES)
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("reverse", [False, True], ids=["in_order", "timers_reversed"])
def test_sharded_registry_equals_the_per_entry_registry_move_by_move(
    policy, lateness, deletions, mutations, seed, reverse
):
    """No update between two rounds of one watermark move (on-time data, or late data between moves): the
    same aggregates move by move, the same dead letters, entry states and accepted count; also when the
    sharded registry's timers of a round fire in reverse order (an entry's earlier ticks are resolved first)."""
    spec = StreamSpec(streams=("a", "b"), tick_seconds=10.0, allowed_lateness=lateness, late_policy=policy)
    events = _schedule(random.Random(seed * 100 + len(policy)), spec)
    per_entry, sharded, moves = _run(events, spec, deletions, mutations, reverse=reverse)
    assert sum(1 for a, _ in moves if a) >= 5  # aggregates in many moves
    for i, (a, b) in enumerate(moves):
        assert a == b, f"move {i}"
    assert sorted(per_entry.dead) == sorted(sharded.dead)
    reasons = {d[0] for d in per_entry.dead}
    assert "late" in reasons or policy == "current"  # the schedule reaches the late rule
    assert reasons & {"duplicate_insert", "unknown_entry", "invalid_item", "deletion_not_allowed"}
    assert per_entry.entries() == sharded.entries()
    assert any(last > 0 for _, last, _ in sharded.entries().values())
    assert per_entry.accepted == sharded.accepted > 30  # ``updates_accepted`` counts the same


def test_one_shard_and_many_shards_give_the_same_aggregates():
    spec = StreamSpec(streams=("a", "b"), tick_seconds=10.0, allowed_lateness=10.0)
    events = _schedule(random.Random(9), spec)
    runs = [_run(events, spec, shards=k)[2] for k in (1, 7, 64)]
    assert runs[0] == runs[1] == runs[2]
    assert [a for a, _ in runs[0]] == [b for _, b in runs[0]]


class _KeepsDeleted(ResolveShardsFn):
    """Twin: a deleted entry keeps its ``last`` (the per-entry registry clears its cell)."""

    def _settle(self, entries, entry_id, state, last, count):
        entries[entry_id] = (state, last, count)


class _NoLastUpdate(ResolveShardsFn):
    """Twin: the tick just closed is not recorded for the entry (``last`` never moves): nothing is late."""

    def _settle(self, entries, entry_id, state, last, count):
        if state is None and not count:
            entries.pop(entry_id, None)
        else:
            old = entries.get(entry_id)
            entries[entry_id] = (state, old[1] if old else 0, count)


@pytest.mark.parametrize("twin", [_KeepsDeleted, _NoLastUpdate])
def test_twins_differ(twin):
    spec = StreamSpec(streams=("a", "b"), tick_seconds=10.0, allowed_lateness=0.0, late_policy="dead_letter")
    events = _schedule(random.Random(4), spec, n_entries=10)
    per_entry, sharded, moves = _run(events, spec, sharded_cls=twin)
    differs = any(a != b for a, b in moves) or sorted(per_entry.dead) != sorted(sharded.dead)
    assert differs


def test_twin_without_update_order_differs(monkeypatch):
    """Twin: an entry's updates of a tick resolved in arrival order, not ``update_order``."""
    monkeypatch.setattr(sharded_module, "in_update_order", lambda ups: list(ups))
    spec = StreamSpec(streams=("a",), tick_seconds=10.0)
    rng = random.Random(5)
    events = []
    for i in range(60):  # insert then delete of one entry in one tick, arriving in the reverse order
        t = 1 + i
        et = (t - 1) * 10.0
        events += [
            ("u", "a", f"x{i}", (t, 2, "delete", None, et + 2, "d")),
            ("u", "a", f"x{i}", (t, 1, "insert", (0, rng.randrange(4)), et + 1, "i")),
            ("w", t * 10.0 + 5),
        ]
    per_entry, sharded, moves = _run(events, spec)
    assert any(a != b for a, b in moves)


class _Ignore:
    def set(self, ts, dynamic_timer_tag=""):
        pass


class _OneTimer(ResolveShardsFn):
    """Twin: one timer per shard, at its earliest pending tick (this module's first version): a firing
    resolves its tick and sets the timer for the next pending tick, which fires a round later."""

    def process(self, element, shard=None, timer=None):
        key = element[0]
        _, waiting = self._load(key, shard)
        before = min(waiting) if waiting else None
        yield from super().process(element, shard=shard, timer=_Ignore())
        nxt = min(waiting) if waiting else None
        if nxt is not None and (before is None or nxt < before):
            timer.set(self.spec.closes_at(nxt), dynamic_timer_tag="one")

    def on_tick_end(self, key=None, ts=None, tag=None, shard=None, timer=None):
        yield from super().on_tick_end(key=key, ts=ts, tag=str(self.spec.closed_tick(ts)), shard=shard, timer=timer)
        _, waiting = self._load(key, shard)
        if waiting:
            timer.set(self.spec.closes_at(min(waiting)), dynamic_timer_tag="one")


def _entry_view(reg, entry_id):
    """An entry's dead letters and state in a registry."""
    dead = sorted(d for d in reg.dead if f"entry_id={entry_id!r}" in d[2])
    return dead, {k: v for k, v in reg.entries().items() if k[1] == entry_id}


def _between_rounds(rng, spec, n_ticks=20, n_entries=8):
    """Schedules where updates arrive between two rounds of one watermark move: a move that closes several
    ticks at once, one round of firings, then updates behind the watermark (late or not, for entries with
    ticks still pending), then the move's remaining rounds."""
    s, events, t = spec.tick_seconds, [], 1
    seq = 0
    while t <= n_ticks:
        for _ in range(rng.randint(1, 6)):  # on time, for ticks t .. t+2
            tick = t + rng.randrange(3)
            seq += 1
            events.append(("u", "a", f"e{rng.randrange(n_entries)}", _update(rng, spec, tick, seq)))
        t += 3
        wm = spec.origin + (t + spec.lateness_ticks) * s + s / 2  # closes every tick before t at once
        events.append(("r", wm))  # one round
        for _ in range(rng.randint(1, 4)):  # behind the watermark, between the rounds
            seq += 1
            tick = max(1, t - 1 - rng.randrange(3))
            events.append(("u", "a", f"e{rng.randrange(n_entries)}", _update(rng, spec, tick, seq)))
        events.append(("w", wm))  # the move's other rounds
    events.append(("w", spec.origin + (n_ticks + 10) * s))
    return events


def _update(rng, spec, tick, seq):
    op = rng.choice(("insert", "insert", "delete", "upsert"))
    item = None if op == "delete" else (0, rng.randrange(4))
    return (tick, seq, op, item, spec.origin + (tick - 1) * spec.tick_seconds + 1.0, f"u{seq}")


def _run_rounds(events, spec, cls, keep=None):
    fn = cls(spec, DOMAINS, True, True, None, shards=1)  # one shard: every entry shares it
    reg, moves = _Registry(fn, True, 1), []
    for ev in events:
        if ev[0] == "u":
            if keep is None or ev[2] == keep:
                reg.arrive(*ev[1:])
        else:
            moves.append(reg.advance(ev[1], rounds=1 if ev[0] == "r" else None))
    return reg, moves


@pytest.mark.parametrize("policy", ["dead_letter", "current"])
def test_no_entry_decides_another_entrys_fate_with_updates_between_rounds(policy):
    """One shard holding every entry; updates arrive between the rounds of firings of one watermark move
    (what Flink does when a timer set in the past fires a round later). Each entry's dead letters and state
    are what they are with that entry alone in the registry, and the aggregates of every move are the sum of
    the entries' alone: no entry's data decides when another's updates are resolved or whether they are late.
    The twin with one timer per shard at its earliest pending tick fails it (another entry's earlier tick
    delays the entry's resolution to a later round, and an update between the rounds is judged against a
    stale ``last``: found in review)."""

    def check(cls) -> bool:
        ok = True
        for seed in range(12):
            spec = StreamSpec(streams=("a",), tick_seconds=10.0, late_policy=policy)
            events = _between_rounds(random.Random(seed), spec)
            full, moves = _run_rounds(events, spec, cls)
            ids = sorted({ev[2] for ev in events if ev[0] == "u"})
            summed = [{} for _ in moves]
            for entry_id in ids:
                alone, alone_moves = _run_rounds(events, spec, cls, keep=entry_id)
                ok &= _entry_view(full, entry_id) == _entry_view(alone, entry_id)
                for i, aggs in enumerate(alone_moves):
                    for stream, tick, ins, dele, n, _ts in aggs:  # (a bundle's element is stamped at its first tick)
                        cur = summed[i].setdefault((stream, tick), [{}, {}, 0])
                        for into, add in ((cur[0], ins), (cur[1], dele)):
                            for k, c in add:
                                into[k] = into.get(k, 0) + c
                        cur[2] += n
            mine = [{(st, t): [dict(i), dict(d), n] for st, t, i, d, n, _ts in m} for m in moves]
            ok &= mine == summed
        return ok

    assert check(ResolveShardsFn)
    assert not check(_OneTimer)


def test_shards_are_a_public_function_of_the_id():
    """CRC-32 of the id's UTF-8 bytes: the same in every process (never Python's salted ``hash``), spread over
    the shards, and the checks of the configured number."""
    import zlib

    assert shard_of("booking-1", 16) == zlib.crc32(b"booking-1") % 16
    assert shard_of("\ud800", 5) == zlib.crc32("\ud800".encode("utf-8", "surrogatepass")) % 5
    counts = [0] * DEFAULT_SHARDS
    for i in range(16_000):
        counts[shard_of(f"e{i}", DEFAULT_SHARDS)] += 1
    assert min(counts) > 800 and max(counts) < 1200
    assert list(KeyByShard(4).process((("a", "e1"), (1,)))) == [(("a", shard_of("e1", 4)), ("e1", (1,)))]
    for bad in (-1, 1.5, True, "8", 1 << 17):
        with pytest.raises(ValueError, match="registry_shards"):
            check_shards(bad)
    with pytest.raises(ValueError, match="at least one shard"):
        KeyByShard(0)


def test_shard_state_round_trips_through_its_coders():
    """What Beam stores for a shard (the ``shard`` value) decodes to an equal value; a value written with another
    number of shards is refused with what to do."""
    spec = StreamSpec(streams=("a", "b"), tick_seconds=10.0, allowed_lateness=10.0)
    events = _schedule(random.Random(6), spec, odd_ids=False)
    cut = len(events) // 2
    _, sharded, _ = _run(events[:cut], spec)
    seen = 0
    for cells in sharded.keys.values():
        value = cells["shard"].read()
        if value is not None:
            coder = ResolveShardsFn.SHARD.coder
            assert coder.decode(coder.encode(value)) == value and value[0] == 3
            seen += 1
    assert seen > 4
    other = ResolveShardsFn(spec, DOMAINS, True, True, None, shards=4)
    other.start_bundle()
    key, cells = next((k, c) for k, c in sharded.keys.items() if c["shard"].read() is not None)
    with pytest.raises(ValueError, match="registry_shards: 3; this job is configured with 4"):
        list(other.process((key, ("e1", (1, 1, "insert", (0, 1), 1.0, "x"))), shard=cells["shard"], timer=_Ignore()))


def _labels(runner: str, **kwargs) -> set:
    """The transform labels of a streaming release built (not run) for ``runner``."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
    from test_beam_releases import CFG, KEY_HEX, REL

    from transforms.records import NoiseKey, UpdateRecord
    from transforms.releases import ReleaseFullyDynamic

    opts = PipelineOptions(runner=runner)
    opts.view_as(StandardOptions).streaming = True
    p = beam.Pipeline(options=opts)
    recs = [UpdateRecord(1.0, "insert", "x", (0, 1), "a", 1)]
    spec = StreamSpec(streams=("a",), tick_seconds=10.0)
    t = ReleaseFullyDynamic(CFG, spec, NoiseKey.fixed(KEY_HEX), release=REL, **kwargs)
    _ = p | beam.Create(recs) | t
    labels = set()

    class _Walk(beam.pipeline.PipelineVisitor):
        def enter_composite_transform(self, node):
            labels.add(node.full_label.rsplit("/", 1)[-1])

        def visit_transform(self, node):
            labels.add(node.full_label.rsplit("/", 1)[-1])

    p.visit(_Walk())
    return labels, t.release


def test_wiring_shards_where_the_runner_holds_the_watermark_and_keeps_the_release_digest():
    """Flink / Dataflow (a runner that holds the release step's watermark for the registry's timers): the sharded
    registry, without the per-tick merge unless asked for; ``registry_shards=0``: the per-entry registry and its
    merge (the savepoint layout before shards); the DirectRunner: the per-entry registry with its counts gate
    whatever the setting. The shards are not part of the release's identity (no release changes)."""
    portable, rel16 = _labels("PortableRunner")
    assert {"KeyByShard", "ResolveShards"} <= portable and not {"ResolveEntries", "MergePerTick"} & portable
    stateful, _ = _labels("PortableRunner", tick_merge="stateful")
    assert {"ResolveShards", "MergePerTick"} <= stateful
    per_entry, rel0 = _labels("PortableRunner", registry_shards=0)
    assert {"ResolveEntries", "MergePerTick"} <= per_entry and "ResolveShards" not in per_entry
    direct, _ = _labels("BundleBasedDirectRunner", registry_shards=64)
    assert "ResolveEntries" in direct and "ResolveShards" not in direct
    assert rel16 == rel0
    with pytest.raises(ValueError, match="registry_shards"):
        _labels("PortableRunner", registry_shards=-2)


def test_config_key_registry_shards():
    """``streams.registry_shards``: 16 by default, 0 for one key per entry, anything else refused before the
    pipeline starts with what to write."""
    from pipelines.config.load import ConfigError, parse_config, read_raw

    raw = read_raw(Path(__file__).resolve().parents[1] / "configs" / "demo.yaml")
    assert parse_config(raw).registry_shards == DEFAULT_SHARDS == 16
    for ok in (0, 1, 256):
        raw["streams"]["registry_shards"] = ok
        assert parse_config(raw).registry_shards == ok
    for bad in (-1, 1.5, True, "4", MAX_SHARDS + 1):
        raw["streams"]["registry_shards"] = bad
        with pytest.raises(ConfigError, match=r"streams\.registry_shards: must be an integer from 0"):
            parse_config(raw)
