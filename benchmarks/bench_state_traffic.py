"""State traffic of the streaming per-stream step: the bytes a firing writes, with the state in chunks
(``transforms.core.foundation.state_chunks``, the default) and written whole (the step before stop 50).

The release's per-stream DoFn (``transforms.per_stream.PerStreamStepFn``) is driven as a live source drives
it: one firing a tick, one insertion a tick, ``auto`` without an end under (1, 1e-6) (so ``anytime_sqrt``,
whose history grows with t), a count and a 16-cell histogram, simulated state cells that count the bytes
written (the value cell and the chunk bag). Both runs release the same records (checked). Printed at each
checkpoint: the whole state (what a firing wrote before), what a chunked firing writes (the mean over the
last 100 firings and the largest, a compaction), the bag, and the CPU a firing takes either way (in memory:
the bytes never cross a network here, so this is the step's own cost, not the runner's).

The open keys' stage 2 (``transforms.open_keys.OpenKeysFn``, ``--open-key-periods``): one selected key, its
counter ``sqrt_factorization`` over the run's horizon (Gaussian, an end), a firing a period, the cell through
``FastPrimitivesCoder`` bytes as a runner keeps it, chunked (4 KiB, the step's default) and whole.

Usage: python -m benchmarks.bench_state_traffic [--ticks 20000] [--every 5000] [--open-key-periods 10000]
"""

from __future__ import annotations

import argparse
import time

from transforms.core import ApproxDP, DynamicConfig, QuerySet, ReleaseIdentity
from transforms.core.foundation.state_chunks import CHUNK_BYTES
from transforms.per_stream import PerStreamStepFn
from transforms.records import NoiseKey
from transforms.releases import ReleaseContinually, StreamSpec

CONFIG = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=16)), ApproxDP(1.0, 1e-6))


class _Cell:
    def __init__(self):
        self.v, self.written = None, 0

    def read(self):
        return self.v

    def write(self, v):
        self.v = v
        self.written += len(v) if isinstance(v, bytes) else 0

    def clear(self):
        self.v = None


class _Bag:
    def __init__(self):
        self.items, self.added = [], 0

    def add(self, x):
        self.items.append(x)
        self.added += len(x)

    def read(self):
        return list(self.items)

    def clear(self):
        self.items = []


class _Timer:
    def set(self, ts):
        pass


class _Run:
    def __init__(self, chunk_bytes: int):
        spec = StreamSpec(streams=("a",), tick_seconds=60.0)
        self.spec = spec
        step = ReleaseContinually("auto", CONFIG, spec, NoiseKey.fixed("00" * 32), release=ReleaseIdentity("bench"))
        self.fn = type("Fn", (PerStreamStepFn,), {"chunk_bytes": chunk_bytes})(step._step(), catch_up=False)
        self.fn.setup()
        self.core, self.pending, self.queries, self.wake_tick, self.bag = _Cell(), _Bag(), _Bag(), _Cell(), _Bag()
        self.written, self.cpu, self.records = [], 0.0, []

    def fire(self, tick: int) -> None:
        self.pending.add((tick, {(0, tick % 16): 1}, {}, 1))
        before = self.core.written + self.bag.added
        t0 = time.process_time()
        out = list(
            self.fn._fire(
                "a",
                self.spec.final_at(tick),
                (self.core, self.bag),
                self.pending,
                self.queries,
                self.wake_tick,
                _Timer(),
                _Timer(),
            )
        )
        self.cpu += time.process_time() - t0
        self.written.append(self.core.written + self.bag.added - before)
        self.records += [(r.value.tick, r.value.query, tuple(r.value.estimate)) for r in out]


class _CoderCell(_Cell):
    def __init__(self):
        from apache_beam.coders import FastPrimitivesCoder

        super().__init__()
        self.coder = FastPrimitivesCoder()

    def read(self):
        return None if self.v is None else self.coder.decode(self.v)

    def write(self, v):
        super().write(self.coder.encode(v))


def open_key(periods: int, every: int) -> None:
    from transforms.core.foundation.noise import NoiseSource
    from transforms.core.selection import KeyLimit, SelectionParams
    from transforms.open_keys import OpenKeysFn

    end = periods + 1
    params = SelectionParams(ApproxDP(1.0, 1e-6), 2, horizon=end, threshold=0)
    spec = StreamSpec(streams=("s",), tick_seconds=60.0, end_time=60.0 * end)
    runs = []
    for chunk in (OpenKeysFn.chunk_bytes, 1 << 62):
        fn = type("Fn", (OpenKeysFn,), {"chunk_bytes": chunk})(
            params, KeyLimit(2, 3, 3), NoiseSource(bytes(32)), spec, end
        )
        fn.setup()
        runs.append((fn, _CoderCell(), _Bag(), [], []))
    print(f"\nopen keys: one selected key, sqrt_factorization over {end} periods, a firing a period")
    print(f"{'period':>7} {'cell, whole':>12} {'chunked: mean':>14} {'max':>8} {'bag':>9}")
    for p in range(1, periods + 1):
        for fn, cell, bag, written, answers in runs:
            before = cell.written + bag.added
            if p <= 4:
                fn.process((("s", "k"), (p, 2, 3)), cell=cell, timer=_Timer())
            answers += fn.on_period_end(key=("s", "k"), ts=spec.final_at(p), cell=cell, timer=_Timer(), chunks=bag)
            written.append(cell.written + bag.added - before)
        if p % every == 0 or p == periods:
            recent = runs[0][3][-min(100, p) :]
            bag = sum(len(e) for e in runs[0][2].items)
            print(f"{p:>7} {runs[1][3][-1]:>12,} {sum(recent) / len(recent):>14,.0f} {max(recent):>8,} {bag:>9,}")
    assert runs[0][4] == runs[1][4], "the two runs answered differently"
    total = [sum(r[3]) for r in runs]
    print(
        f"answers identical ({len(runs[0][4]):,}); bytes written over the run: whole {total[1]:,}, "
        f"chunked {total[0]:,} ({total[1] / total[0]:.0f}x less)"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ticks", type=int, default=20_000)
    ap.add_argument("--every", type=int, default=5_000)
    ap.add_argument("--open-key-periods", type=int, default=10_000, help="0: skip the open keys' part")
    args = ap.parse_args(argv)
    chunked, whole = _Run(CHUNK_BYTES), _Run(1 << 62)
    print(f"chunk {CHUNK_BYTES} bytes; auto without an end, (1, 1e-6), count + 16-cell histogram, a firing a tick")
    print(
        f"{'tick':>7} {'whole state':>12} {'chunked: mean':>14} {'max':>10} {'bag':>11} "
        f"{'ms/firing whole':>16} {'chunked':>8}"
    )
    cpu = [0.0, 0.0]
    for tick in range(1, args.ticks + 1):
        whole.fire(tick)
        chunked.fire(tick)
        if tick % args.every == 0 or tick == args.ticks:
            n = min(100, tick)
            recent = chunked.written[-n:]
            bag = sum(len(e) for e in chunked.bag.items)
            ms = [(r.cpu - c) * 1e3 / args.every for r, c in zip((whole, chunked), cpu)]
            cpu = [whole.cpu, chunked.cpu]
            print(
                f"{tick:>7} {whole.written[-1]:>12,} {sum(recent) / n:>14,.0f} {max(recent):>10,} {bag:>11,} "
                f"{ms[0]:>16.2f} {ms[1]:>8.2f}"
            )
    assert chunked.records == whole.records, "the two runs released different records"
    total = [sum(r.written) for r in (whole, chunked)]
    print(
        f"records identical ({len(whole.records):,}); bytes written over the run: whole {total[0]:,}, "
        f"chunked {total[1]:,} ({total[0] / total[1]:.0f}x less)"
    )
    if args.open_key_periods:
        open_key(args.open_key_periods, args.every)


if __name__ == "__main__":
    main()
