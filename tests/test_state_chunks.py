"""A large state written as a head and content-addressed chunks (``transforms.core.foundation.state_chunks``,
the per-stream step's ``chunks`` bag): what comes back is what went in, byte for byte, whatever the writes
before it; a firing writes the chunks that changed, not the state; the bag stays within its bound; a cell
of the previous version reads as before; a bag that lost a chunk is refused, never read as another state.

Tiers: the store alone (plain data made by ``to_plain``, simulated cells), the real per-stream DoFn driven
with simulated cells (``auto`` without an end under Gaussian noise: ``anytime_sqrt``'s growing history)
against its twin that writes whole states, and the streaming DirectRunner with TestStream.
"""

from __future__ import annotations

import io
import pickle

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to

import transforms.core.foundation.state_chunks as chunks_module
from transforms.core import ApproxDP, DynamicConfig, QuerySet, ReleaseIdentity, Update
from transforms.core.continual.auto import AutoRelease
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import StateError, decode, encode, to_plain
from transforms.core.foundation.state_chunks import DIGEST_BYTES, ChunkStore
from transforms.per_stream import PerStreamStepFn
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseContinually, StreamSpec

KEY = bytes(range(32))


def canon(plain) -> bytes:
    """Plain data as bytes that depend on its values only (pickle without its memo: a decoded state shares
    no object the way the one written did, so ``encode`` of the two can differ in its back-references)."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, protocol=4)
    pickler.fast = True
    pickler.dump(plain)
    return buf.getvalue()


REL = ReleaseIdentity("test-release-chunks")
C = 256  # chunk bytes of the store tests


class Cells:
    """A value cell and a bag, as Beam's state keeps them between firings (committed writes only)."""

    def __init__(self):
        self.head, self.bag = None, []

    def apply(self, write):
        if write.clear:
            self.bag = []
        self.bag += write.adds
        self.head = write.head

    def load(self, chunk_bytes=C, floor=1 << 12):
        return ChunkStore.load(self.head, lambda: list(self.bag), chunk_bytes, floor)

    @property
    def bag_bytes(self):
        return sum(len(e) for e in self.bag)


def _state(rng, rows, extra=0):
    """A state like a counter's: growing windows (float and int), a small array, nested containers, a dict
    whose keys look like tags (stored escaped), bytes that are not an array."""
    return {
        "windows": [rng.normal(size=(rows, 3)), np.arange(rows * 5, dtype=np.int64).reshape(rows, 5)],
        "small": np.ones(4, dtype=np.int32),
        "nested": ({"deep": [np.full(rows + extra, 7, dtype=np.uint16)]}, "x"),
        "data": {"$nd": (1, 2), "$c": "y"},
        "raw": b"\x00" * 5000,
        "t": rows,
    }


def test_what_is_loaded_is_what_was_written_byte_for_byte():
    """Round trips through the cells after every write, the store written by one writer throughout and by a
    fresh one loaded from the cells (a worker's first firing of the key)."""
    rng = np.random.default_rng(0)
    cells, store = Cells(), ChunkStore(C, floor=1 << 12)
    for rows in list(range(1, 80)) + [40, 200, 7, 300]:  # growth, then shrinks and jumps
        obj = _state(rng, rows)
        want = canon(to_plain(obj))
        cells.apply(store.write(lambda obj=obj: to_plain(obj)))
        plain, fresh = cells.load()
        assert canon(plain) == want
        if rows % 3 == 0:  # a cold load: the next write starts from what the cells hold
            store = fresh


def test_a_changed_chunk_in_the_middle_gets_a_new_name():
    """Same length, one byte changed in the middle of an array: the chunk is hashed again (a write that kept
    the old digest would load the old bytes)."""
    cells, store = Cells(), ChunkStore(C)
    arr = np.zeros(4096, dtype=np.uint8)
    cells.apply(store.write(lambda: to_plain({"a": arr})))
    arr2 = arr.copy()
    arr2[2000] = 9
    write = store.write(lambda: to_plain({"a": arr2}))
    assert len(write.adds) == 1 and write.adds[0][DIGEST_BYTES:] == arr2[1792:2048].tobytes()
    cells.apply(write)
    assert canon(cells.load()[0]) == canon(to_plain({"a": arr2}))


def test_a_growing_array_writes_its_last_chunk_only(monkeypatch):
    """An array that grows by a row a write: each write adds the chunk that holds the new row (and the head),
    hashes nothing else, while the whole state grows linearly."""
    hashed = []
    digest = chunks_module._digest
    monkeypatch.setattr(chunks_module, "_digest", lambda chunk: hashed.append(len(chunk)) or digest(chunk))
    cells, store = Cells(), ChunkStore(C, floor=1 << 30)
    rows = np.arange(64 * 400, dtype=np.float64).reshape(400, 64)  # a row: 512 bytes = 2 chunks
    for n in range(1, 401):
        if n in (150, 300):  # a cold load: what the cells hold names the chunks, nothing is hashed again
            store = cells.load(floor=1 << 30)[1]
        hashed.clear()
        write = store.write(lambda n=n: to_plain({"w": rows[:n], "t": n}))
        cells.apply(write)
        assert len(hashed) == 2 and len(write.adds) == 2  # the new row's two chunks, nothing before them
        assert len(write.head) < 300 + 20 * 2 * n  # a digest a chunk: 16 bytes, 3 of pickle framing and memo
    whole = len(encode(to_plain({"w": rows, "t": 400})))
    assert whole > 200_000 and write.bytes_written < 0.1 * whole  # the head: 800 digests; the adds: 2 chunks
    assert sum(len(a) for a in write.adds) == 2 * (C + DIGEST_BYTES)
    assert canon(cells.load()[0]) == canon(to_plain({"w": rows, "t": 400}))


def test_the_bag_stays_within_twice_the_state_plus_the_floor():
    """Every write rewrites a random tenth of the chunks: garbage accumulates until the bag would exceed
    2 x live + floor, then the bag is written afresh with the live chunks only (one entry each); the loads
    stay exact throughout."""
    rng = np.random.default_rng(1)
    floor = 1 << 13
    cells, store = Cells(), ChunkStore(C, floor=floor)
    arr = rng.integers(0, 255, size=C * 40, dtype=np.uint8)
    fresh_writes = 0
    for _ in range(200):
        for j in rng.choice(40, size=4, replace=False):
            arr[j * C + int(rng.integers(C))] ^= 1
        write = store.write(lambda: to_plain({"a": arr}))
        cells.apply(write)
        live = len(arr) + DIGEST_BYTES * 40
        assert cells.bag_bytes <= 2 * live + floor
        if write.clear:
            fresh_writes += 1
            assert len(cells.bag) == 40 and cells.bag_bytes == live
        assert (store.bag_bytes, store.bag_count) == (cells.bag_bytes, len(cells.bag))
        assert canon(cells.load(floor=floor)[0]) == canon(to_plain({"a": arr}))
    assert fresh_writes >= 5  # 4 x (256 + 16) bytes a write against a floor and slack of ~28 KB


def test_a_state_without_large_arrays_is_written_as_before():
    """No array of a chunk or more: the head is the plain encoding (the bytes the step wrote before chunks, so
    golden files and old cells keep their form), and a bag left from a larger state is cleared."""
    store, cells = ChunkStore(C), Cells()
    big = {"a": np.zeros(C, dtype=np.uint8)}
    cells.apply(store.write(lambda: to_plain(big)))
    assert cells.bag and cells.head != encode(to_plain(big))
    small = {"a": np.zeros(C - 1, dtype=np.uint8), "b": [1, 2.5, "z"]}
    write = store.write(lambda: to_plain(small))
    assert write.head == encode(to_plain(small)) and write.clear and not write.adds
    cells.apply(write)
    assert cells.bag == [] and store.write(lambda: to_plain(small)).clear is False


def test_a_cell_of_the_previous_version_reads_without_the_bag():
    plain = to_plain({"a": np.arange(10_000), "t": 3})

    def no_bag():
        raise AssertionError("a plain cell needs no chunk")

    back, store = ChunkStore.load(encode(plain), no_bag, C)
    assert back == plain and store.bag_count == 0


def test_a_bag_that_lost_or_changed_a_chunk_is_refused():
    cells, store = Cells(), ChunkStore(C)
    cells.apply(store.write(lambda: to_plain({"a": np.arange(1000, dtype=np.int64)})))
    lost = Cells()
    lost.head, lost.bag = cells.head, cells.bag[1:]
    with pytest.raises(StateError, match="head says"):
        lost.load()
    swapped = Cells()  # same count and bytes, one chunk under another name
    swapped.head = cells.head
    swapped.bag = [bytes(DIGEST_BYTES) + cells.bag[0][DIGEST_BYTES:]] + cells.bag[1:]
    with pytest.raises(StateError, match="missing"):
        swapped.load()
    newer = Cells()
    newer.head = encode({"$chunked": 2, "state": {}, "bag": (0, 0, 0)})
    with pytest.raises(StateError, match="newer"):
        newer.load()
    with pytest.raises(ValueError, match="multiple of 8"):
        ChunkStore(100)


# ---------------------------------------------------------------------------------------------
# The per-stream step with simulated cells: auto without an end, Gaussian (anytime_sqrt's history)
# ---------------------------------------------------------------------------------------------


class _Bag:
    def __init__(self):
        self.items = []
        self.added = 0

    def add(self, x):
        self.items.append(x)
        self.added += len(x)

    def read(self):
        return list(self.items)

    def clear(self):
        self.items = []


class _Cell:
    def __init__(self):
        self.v = None
        self.written = 0

    def read(self):
        return self.v

    def write(self, v):
        self.v = v
        self.written += len(v) if isinstance(v, bytes) else 0

    def clear(self):
        self.v = None


class _Timer:
    def set(self, ts):
        pass


CONFIG = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=16)), ApproxDP(1.0, 1e-6))


def _drive(chunk_bytes, ticks, cold_at=(), retry_at=(), floor=1 << 22):
    """The release's per-stream step for stream "a", one firing a tick (a watermark that moves with the
    ticks, as a live source's), one insertion a tick; ``cold_at``: ticks before whose firing the worker's
    memory is dropped (the next firing loads the cells); ``retry_at``: ticks whose firing runs, is thrown
    away with its cells' writes (a failed bundle: the runner commits nothing) and runs again on the same
    worker, whose memory holds the failed attempt's state. Returns the records and the bytes each firing wrote
    (value cell + bag entries)."""
    spec = StreamSpec(streams=("a",), tick_seconds=60.0)
    step = ReleaseContinually("auto", CONFIG, spec, NoiseKey.fixed(KEY.hex()), release=REL)._step()
    fn = type("Fn", (PerStreamStepFn,), {"chunk_bytes": chunk_bytes, "chunk_floor": floor})(step, catch_up=False)
    fn.setup()
    core, pending, queries, wake_tick, bag = _Cell(), _Bag(), _Bag(), _Cell(), _Bag()
    records, written = [], []
    for tick in range(1, ticks + 1):
        if tick in cold_at:
            fn._live.clear()
        pending.add((tick, {(0, tick % 16): 1}, {}, 1))
        if tick in retry_at:
            saved = (core.v, list(bag.items), list(pending.items), wake_tick.v)
            failed = [
                _record(r)
                for r in fn._fire(
                    "a", spec.final_at(tick), (core, bag), pending, queries, wake_tick, _Timer(), _Timer()
                )
            ]
            core.v, bag.items, pending.items, wake_tick.v = saved[0], saved[1], saved[2], saved[3]
        before = core.written + bag.added
        out = fn._fire("a", spec.final_at(tick), (core, bag), pending, queries, wake_tick, _Timer(), _Timer())
        records += [_record(r) for r in out]
        if tick in retry_at:
            assert records[-len(failed) :] == failed  # the retry releases what the failed attempt did
        written.append(core.written + bag.added - before)
    return records, written, core, bag


def _record(out):
    a = getattr(out, "value", out)
    return (a.tick, a.query, tuple(float(x) for x in a.estimate), a.error_bound)


def test_the_step_writes_what_changed_and_releases_what_the_whole_state_releases():
    """1,200 firings of ``auto`` without an end (count + 16-cell histogram, ``anytime_sqrt`` keeping every
    row): the records equal those of the twin that writes its whole state (chunks larger than any array),
    firing by firing, with two cold loads from the cells on the way; each firing writes the head and the
    chunks that changed (a bound that does not grow with t), while the twin's firings grow with the history."""
    ticks = 1200
    whole, whole_written, twin_core, _ = _drive(1 << 40, ticks)
    got, written, core, bag = _drive(512, ticks, cold_at=(300, 901), retry_at=(450, 1000))
    # the bag written afresh often (a 16 KiB floor), cold loads after it: the cells always agree with the head
    assert _drive(512, 400, cold_at=range(100, 400, 37), floor=1 << 14)[0] == whole[: len(_drive(1 << 40, 400)[0])]
    assert got == whole and len(got) >= ticks * 2
    assert whole_written[-1] > 250_000 and whole_written[-1] > 4 * whole_written[99]
    late = sorted(written[600:])
    # a firing: the head (a digest a 512-byte chunk) and the chunks that changed (about 15 KB here); the bag
    # written afresh now and then (the largest); the twin writes its whole state (about 300 KB) every time
    assert late[len(late) // 2] < 0.06 * whole_written[-1] and late[-1] < 0.2 * whole_written[-1]
    assert bag.items and "$chunked" in decode(core.v) and "$chunked" not in decode(twin_core.v)
    # what the cells hold is the whole state of the twin's last firing
    plain, _ = ChunkStore.load(core.v, bag.read, 512)
    assert canon(plain) == canon(decode(twin_core.v))


def test_the_streaming_directrunner_releases_equal_the_core_with_chunks(monkeypatch):
    """TestStream on the DirectRunner, the watermark a tick at a time (a firing per tick): with 64-byte chunks
    (every counter window chunked from its ninth row) the records equal the core's in memory, and the chunk
    bag was written."""
    monkeypatch.setattr(PerStreamStepFn, "chunk_bytes", 64)
    writes = []
    real = ChunkStore.write

    def spy(self, to_state):
        write = real(self, to_state)
        writes.append(len(write.adds))
        return write

    monkeypatch.setattr(ChunkStore, "write", spy)
    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), ApproxDP(1.0, 1e-6))
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=120.0)
    options = {"counter": "anytime_sqrt"}
    t = ReleaseContinually("auto", cfg, spec, NoiseKey.fixed(KEY.hex()), options=options, release=REL)
    records = [UpdateRecord(i + 0.5, "insert", f"e{i}", (0, i % 3), "a", i) for i in range(0, 110, 2)]
    records += [UpdateRecord(i + 0.7, "delete", f"e{i - 9}", None, "a", 1000 + i) for i in range(11, 110, 6)]
    noise = NoiseSource(KEY).for_release(t.release)
    core = AutoRelease(cfg, stream="a", options=t.options, end_tick=spec.end_tick)
    by_tick = {}
    for r in sorted(records, key=lambda r: (spec.tick_of(r.event_time), r.seq)):
        by_tick.setdefault(spec.tick_of(r.event_time), []).append(Update(r.op, r.entry_id, r.item))
    results = [core.process_tick(k, ups, noise) for k, ups in sorted(by_tick.items())] + core.run_to_end(noise)
    expect = [(a.tick, a.query, tuple(float(x) for x in a.estimate)) for r in results for a in r.answers]
    assert len(expect) == 240
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    with TestPipeline(options=opts) as p:
        ts = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in records])
        for wm in range(1, 125):
            ts = ts.advance_watermark_to(float(wm))
        out = p | ts.advance_watermark_to_infinity() | t
        got = out["answers"] | beam.Map(lambda a: (a.tick, a.query, tuple(float(x) for x in a.estimate)))
        assert_that(got, equal_to(expect))
    assert len(writes) >= 100 and sum(writes) >= 100  # a firing a tick, each adding the chunks that changed


# ---------------------------------------------------------------------------------------------
# The open keys' step: a selected key's counter (sqrt_factorization over the horizon) in chunks
# ---------------------------------------------------------------------------------------------


class _CoderCell:
    """A value cell that keeps what it is given as its coder's bytes (as a runner does) and counts them."""

    def __init__(self):
        from apache_beam.coders import FastPrimitivesCoder

        self.coder, self.data, self.written = FastPrimitivesCoder(), None, 0

    def read(self):
        return None if self.data is None else self.coder.decode(self.data)

    def write(self, v):
        self.data = self.coder.encode(v)
        self.written += len(self.data)

    def clear(self):
        self.data = None


def _open_key(chunk_bytes, periods, end=None):
    """One key of the open keys' streaming stage 2 (``OpenKeysFn``), its events at periods 1-4 and every 250th
    (arriving through ``process``, which rewrites the cell) and a firing a period; every cell read and
    write through the coder's bytes, every firing a cold load (the step keeps no key in memory)."""
    from transforms.core.selection import KeyLimit, SelectionParams
    from transforms.open_keys import OpenKeysFn
    from transforms.spec import StreamSpec as Spec

    end = periods + 100 if end is None else end  # by default the run goes on: the cells hold the key's state
    params = SelectionParams(ApproxDP(1.0, 1e-6), 2, horizon=end, threshold=0)
    spec = Spec(streams=("s",), tick_seconds=60.0, end_time=60.0 * end)
    fn = type("Fn", (OpenKeysFn,), {"chunk_bytes": chunk_bytes, "chunk_floor": 4096})(
        params, KeyLimit(2, 3, 3), NoiseSource(KEY), spec, end
    )
    fn.setup()
    cell, bag, answers, written = _CoderCell(), _Bag(), [], []

    class Timer:
        def set(self, ts):
            pass

    for p in range(1, periods + 1):
        before = cell.written + bag.added
        if p <= 4:
            fn.process((("s", "k"), (p, 2, 3)), cell=cell, timer=Timer())
        elif p % 250 == 0:  # an entry more: its arrival rewrites a cell that holds a chunked head
            fn.process((("s", "k"), (p, 0, 1)), cell=cell, timer=Timer())
        answers += list(fn.on_period_end(key=("s", "k"), ts=spec.final_at(p), cell=cell, timer=Timer(), chunks=bag))
        written.append(cell.written + bag.added - before)
    return answers, written, cell, bag


def test_a_selected_open_key_writes_what_changed_and_answers_what_the_whole_state_answers():
    """A key selected early and answered every period for 1,500 periods: the answers equal those of the twin
    that keeps its whole state in the cell, period by period; a period writes the head and the chunks that
    changed (about 4.3 KB here) while the twin's cell grows with its counter's window (about 27 KB at the
    end); the cell and the bag hold the twin's state."""
    periods = 1500
    whole, whole_written, whole_cell, _ = _open_key(1 << 40, periods)
    got, written, cell, bag = _open_key(256, periods)
    assert got == whole and len(got) > periods - 20
    assert whole_written[-1] > 20_000 and whole_written[-1] > 5 * whole_written[99]
    late = sorted(written[750:])
    # the head (a digest a 256-byte chunk: ~2 KB, and the key's other fields) and about four chunks: ~4.3 KB;
    # the largest, a bag written afresh (its distinct chunks: the windows' zeros once), still below the twin's
    assert late[len(late) // 2] < 0.2 * whole_written[-1] and late[-1] < whole_written[-1]
    head = cell.read()[1]
    assert "$chunked" in head and bag.items and "$chunked" not in whole_cell.read()[1]
    plain, _ = ChunkStore.load_plain(head, bag.read, 256)
    assert canon(plain) == canon(whole_cell.read()[1])


def test_an_open_key_at_the_end_of_the_run_leaves_neither_cell_nor_chunks():
    answers, _, cell, bag = _open_key(256, 400, end=400)
    assert len(answers) > 380 and cell.read() is None and bag.items == []
