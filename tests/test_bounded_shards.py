"""The bounded entry shuffle in lists per hash shard (issue 30, ``docs/performance.md`` round 14).

``BatchByShardFn`` puts each update in a list of its ``(stream, shard_of(entry id))`` (at most ``flush`` a list,
the rest at the end of the bundle); after the GroupByKey, ``ResolveShardsBoundedFn`` groups a shard's updates
by entry and resolves each entry as ``ResolveEntriesBoundedFn`` resolved the entry shuffle's group. Checked
here without Beam's runner (the DoFns called as a bundle would call them) against the entry shuffle on random
entries with every registry refusal, for the aggregates, the dead letters (as records and as references), the
counts and the streams seen; each check has a broken twin that must fail. The CLI's outputs through the new
graph are checked byte for byte elsewhere (``tests/test_flink.py``, ``tests/test_raw_out_of_shuffle.py``,
``benchmarks/config_snapshot.py``).
"""

from __future__ import annotations

import collections
import random

import pytest
from apache_beam.pvalue import TaggedOutput
from apache_beam.utils.windowed_value import WindowedValue

from transforms.bounded import FLUSH, BatchByShardFn, ResolveEntriesBoundedFn, ResolveShardsBoundedFn
from transforms.common import raw_digest
from transforms.core.foundation.aggregates import fold
from transforms.core.foundation.entries import DeletionsRefused
from transforms.sharded import shard_of
from transforms.spec import StreamSpec

SPEC = StreamSpec(tick_seconds=100.0, streams=("eu", "us"), end_time=1000.0)
DOMAINS = (3,)
SETTINGS = ((True, None), (False, None), (DeletionsRefused("deletion_not_supported"), None), (True, 2))


def _elements(rng: random.Random, n_entries: int, digests: bool) -> list:
    """``((stream, entry id), (tick, seq, op, item, time, raw))`` in a random order: entries of 1-8 updates
    (inserts, upserts, deletes, duplicates, deletes of nothing), ids with lone surrogates and a '$' among them."""
    out = []
    for i in range(n_entries):
        stream = rng.choice(SPEC.streams)
        eid = rng.choice((f"e{i}", f"\ud800{i}", f"${i}", f"id-{i:05d}"))
        for _ in range(rng.randint(1, 8)):
            op = rng.choice(("insert", "insert", "upsert", "delete"))
            item = None if op == "delete" else (rng.randrange(3),)
            t = 100.0 * rng.randrange(9) + rng.choice((0.0, 10.0, 50.0))
            line = f'{{"id": "{i}", "op": "{op}", "time": {t}, "n": {rng.randrange(3)}}}'
            raw = raw_digest(line) if digests else line
            out.append(((stream, eid), (1 + int(t // 100), rng.randrange(2), op, item, t, raw)))
    rng.shuffle(out)
    return out


def _run_bundle(fn, elements) -> list:
    """``fn``'s outputs over one bundle (start, every element, finish), window wrappers removed."""
    fn.start_bundle()
    out = []
    for e in elements:
        out.extend(fn.process(e) or ())
    out.extend(fn.finish_bundle() or ())
    return [o.value if isinstance(o, WindowedValue) else o for o in out]


def _outputs(outs) -> tuple:
    """(aggregates summed per (stream, tick) over the bundles, dead letters as a multiset, streams seen)."""
    aggs = collections.defaultdict(dict)
    dead, seen = collections.Counter(), set()
    for o in outs:
        if isinstance(o, TaggedOutput):
            v = o.value.value if isinstance(o.value, WindowedValue) else o.value
            if o.tag == ResolveEntriesBoundedFn.DEAD:
                dead[repr(v)] += 1
            else:
                seen.add(v)
            continue
        stream, ticks = o
        for agg in ticks:
            fold(aggs[stream], *agg)
    summed = {
        (s, t): (dict(sorted(a[0].items())), dict(sorted(a[1].items())), a[2]) for s in aggs for t, a in aggs[s].items()
    }
    return summed, dead, seen


def _entry_shuffle(elements, settings, digests) -> tuple:
    """The former graph: a group per ``(stream, entry)`` (GroupByEntry), each through ``ResolveEntriesBoundedFn``,
    in bundles of 7 groups."""
    groups = collections.defaultdict(list)
    for key, value in elements:
        groups[key].append(value)
    fn = ResolveEntriesBoundedFn(SPEC, DOMAINS, *settings, digests=digests)
    items = list(groups.items())
    outs = []
    for i in range(0, len(items), 7):
        outs += _run_bundle(fn, items[i : i + 7])
    return _outputs(outs)


def _shard_shuffle(elements, settings, digests, shards=8, flush=5, resolve=ResolveShardsBoundedFn, bundles=3):
    """The new graph: ``BatchByShardFn`` over ``bundles`` bundles, a GroupByKey, ``ResolveShardsBoundedFn``."""
    batcher = BatchByShardFn(shards, flush)
    lists = []
    size = -(-len(elements) // bundles)
    for i in range(0, len(elements), size):
        lists += _run_bundle(batcher, elements[i : i + size])
    groups = collections.defaultdict(list)
    for skey, batch in lists:
        groups[skey].append(batch)
    fn = resolve(SPEC, DOMAINS, *settings, digests=digests)
    outs = []
    items = list(groups.items())
    for i in range(0, len(items), 2):
        outs += _run_bundle(fn, items[i : i + 2])
    return _outputs(outs), lists


@pytest.mark.parametrize("digests", [False, True])
@pytest.mark.parametrize("settings", SETTINGS, ids=["deletions", "no-deletions", "refused", "max-mutations"])
def test_shards_resolve_as_the_entry_shuffle(settings, digests):
    rng = random.Random(hash((digests, SETTINGS.index(settings))) % 1000)
    elements = _elements(rng, 300, digests)
    expected = _entry_shuffle(elements, settings, digests)
    got, lists = _shard_shuffle(elements, settings, digests)
    assert expected[0] and expected[2] == set(SPEC.streams)
    assert sum(expected[1].values()) >= 20  # refusals were exercised
    assert got == expected
    # every list is one stream's and one shard's, of at most `flush` updates, and together they are the input
    assert all(1 <= len(b) <= 5 and all(shard_of(e, 8) == k[1] for e, _ in b) for k, b in lists)
    assert collections.Counter(((k[0], e), repr(v)) for k, b in lists for e, v in b) == collections.Counter(
        (k, repr(v)) for k, v in elements
    )


def test_lists_are_flushed_at_the_limit_and_at_the_end_of_the_bundle():
    rng = random.Random(4)
    elements = _elements(rng, 200, True)
    fn = BatchByShardFn(4, 16)
    fn.start_bundle()
    early = [o for e in elements for o in fn.process(e)]
    held = sum(len(b) for b in fn.buf.values())
    late = list(fn.finish_bundle())
    assert early and all(len(o.value[1]) == 16 for o in early)  # full lists leave as soon as they are full
    assert held == sum(len(o.value[1]) for o in late) and all(len(o.value[1]) < 16 for o in late)
    assert sum(len(o.value[1]) for o in early + late) == len(elements)
    assert fn.buf == {} and FLUSH >= 1
    with pytest.raises(ValueError, match="at least one shard"):
        BatchByShardFn(0, 1)


class _PerBatch(ResolveShardsBoundedFn):
    """Broken twin: each list resolved on its own (an entry's updates split across lists never meet)."""

    def process(self, element):
        (stream, shard), batches = element
        for batch in batches:
            yield from super().process(((stream, shard), [batch]))


class _ByPosition(BatchByShardFn):
    """Broken twin: lists keyed by arrival, not by the entry (an entry's updates go to several groups)."""

    def process(self, element):
        self.i = getattr(self, "i", 0) + 1
        key, value = element
        yield WindowedValue(((key[0], self.i % self.shards), [(key[1], value)]), 0, ())


def test_broken_twins_fail():
    rng = random.Random(9)
    elements = _elements(rng, 300, True)
    settings = SETTINGS[0]
    expected = _entry_shuffle(elements, settings, True)
    assert _shard_shuffle(elements, settings, True, resolve=_PerBatch)[0] != expected
    batcher = _ByPosition(8, 5)
    lists = [o.value for e in elements for o in batcher.process(e)]
    groups = collections.defaultdict(list)
    for skey, batch in lists:
        groups[skey].append(batch)
    fn = ResolveShardsBoundedFn(SPEC, DOMAINS, *settings, digests=True)
    assert _outputs(_run_bundle(fn, list(groups.items()))) != expected


def test_one_shard_and_one_update_per_list_are_the_entry_shuffle_too():
    rng = random.Random(11)
    elements = _elements(rng, 120, False)
    expected = _entry_shuffle(elements, SETTINGS[3], False)
    assert _shard_shuffle(elements, SETTINGS[3], False, shards=1, flush=1, bundles=1)[0] == expected
    assert _shard_shuffle(elements, SETTINGS[3], False, shards=1000, flush=10_000, bundles=5)[0] == expected
