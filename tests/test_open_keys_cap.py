"""The streaming cap stage (``transforms.open_keys.OpenKeysCapFn``, one Beam key, issue 33): an answer's arrival
reads a small cell (the earliest pending period), not the tuple of every released key, so a period costs O(N)
for N released keys (``benchmarks/bench_open_keys_cap.py``); a state written before the small cell restores;
bounded, the keys past the cap are neither tested nor answered by the per-key stage.
Driven directly with cells stored as bytes (Beam's DirectRunner equality is ``tests/test_open_keys_beam.py``)."""

from __future__ import annotations

from benchmarks.bench_open_keys_cap import BytesBag, BytesCell, FakeTimer
from transforms.core.foundation.accounting import PureDP
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.selection import KeyLimit, OpenKeyRelease, PersonKeys, SelectionParams
from transforms.open_keys import OPEN_KEYS_CELL_VERSION, OpenKeysBoundedFn, OpenKeysCapFn, OpenKeysSelectBoundedFn
from transforms.spec import StreamSpec

SPEC = StreamSpec(tick_seconds=10.0, end_time=50.0)
KEY = NoiseSource(bytes(range(32)))
LIMIT = KeyLimit(2, 3, 3)


class _Counting(BytesCell):
    def __init__(self):
        super().__init__()
        self.reads = 0

    def read(self):
        self.reads += 1
        return super().read()


def _period(fn, p, keys, cells):
    big, nxt, bag, timer = cells
    for key in keys:
        fn.process((0, (p, key, 7, 1.5)), cell=big, pending=bag, timer=timer, nxt_cell=nxt)
    return list(fn.on_flush(ts=fn._flush_at(p), cell=big, pending=bag, timer=timer, nxt_cell=nxt))


def test_an_answer_does_not_read_the_released_keys():
    fn = OpenKeysCapFn(SPEC, 3)
    cells = (_Counting(), BytesCell(), BytesBag(), FakeTimer())
    keys = [f"k{i}" for i in range(20)]
    out = _period(fn, 1, keys, cells)
    assert [a[1] for a in out] == ["k0", "k1", "k10"]  # the cap: the first 3 in repr order
    cells[0].reads = 0
    out = _period(fn, 2, keys, cells)
    assert [a[1] for a in out] == ["k0", "k1", "k10"]
    assert cells[0].reads == 1  # once, at the flush; never per answer (20 answers here)


def test_a_state_written_before_the_small_cell_restores():
    """``open_keys_cap`` as the round-7 stage wrote it (released keys, a pending period 3 whose timer the runner
    restores), no ``open_keys_cap_next``: an answer of period 4 keeps the restored timer (the pending period is
    read from the big cell once), and each period is flushed at its time with the released keys kept."""
    fn = OpenKeysCapFn(SPEC, 2)
    big, nxt, bag, timer = BytesCell(), BytesCell(), BytesBag(), FakeTimer()
    big.write((OPEN_KEYS_CELL_VERSION, ("a", "b"), 3))
    bag.add((3, "a", 5, 1.0))
    fn.process((0, (4, "b", 6, 1.0)), cell=big, pending=bag, timer=timer, nxt_cell=nxt)
    fn.process((0, (4, "c", 9, 1.0)), cell=big, pending=bag, timer=timer, nxt_cell=nxt)
    assert timer.at is None and nxt.read() == (OPEN_KEYS_CELL_VERSION, 3)  # the restored timer (period 3) stands
    out = list(fn.on_flush(ts=fn._flush_at(3), cell=big, pending=bag, timer=timer, nxt_cell=nxt))
    assert out == [(3, "a", 5, 1.0)] and timer.at == fn._flush_at(4)
    out = list(fn.on_flush(ts=fn._flush_at(4), cell=big, pending=bag, timer=timer, nxt_cell=nxt))
    assert out == [(4, "b", 6, 1.0)]  # c is past the cap
    assert big.read() == (OPEN_KEYS_CELL_VERSION, ("a", "b"), None) and nxt.read() == (OPEN_KEYS_CELL_VERSION, None)


def test_bounded_keys_past_the_cap_are_neither_tested_nor_answered():
    """The bounded step with ``max_keys`` (round 8): a test-only pass gives each key's selection period, equal to
    the core's; the per-key stage answers the released keys and skips the others entirely."""
    params = SelectionParams(PureDP(2.0), 2, horizon=6, threshold=1)
    stream = [[(f"p{i}", Update("insert", f"e{i}", (f"k{i % 4}",))) for i in range(12)]] + [[]] * 5
    core = OpenKeyRelease(params, LIMIT, KEY)
    first = {}
    for p, ups in enumerate(stream, 1):
        for key in core.step(ups).selected:
            first[key] = p
    assert len(first) >= 3
    events: dict = {}
    pk = PersonKeys(LIMIT)
    for p, ups in enumerate(stream, 1):
        for key, dl, de in pk.decide_tick(p, ups)[2]:
            events.setdefault(key, []).append((p, dl, de))
    select, answer = (
        OpenKeysSelectBoundedFn(params, LIMIT, KEY, SPEC, 6),
        OpenKeysBoundedFn(params, LIMIT, KEY, SPEC, 6),
    )
    select.setup()
    answer.setup()
    got = dict(x for key, ev in events.items() for x in select.process((key, ev)))
    assert got == first
    released = frozenset(sorted(first, key=repr)[:1])
    for key, ev in events.items():
        out = list(answer.process((key, ev), released=released))
        assert bool(out) == (key in released)
        if key in released:
            assert [a[0] for a in out] == list(range(first[key], 7))
