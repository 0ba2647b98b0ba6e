"""How many released keys the streaming cap stage (``transforms.open_keys.OpenKeysCapFn``, one Beam key) can
carry per period: ``python -m benchmarks.bench_open_keys_cap [--sizes 1000 10000 100000] [--periods 3]``.

The stage sees every released key's answer every period (``N`` answers per period once ``N`` keys are
released) on ONE Beam key. This drives its ``process`` and ``on_flush`` directly, with state that goes through
``FastPrimitivesCoder`` bytes on every read and write (a runner without a state cache: the worst case; the
DirectRunner and Flink's Python SDK harness cache within a bundle), and reports per period: the seconds of
CPU, the bytes of the ``open_keys_cap`` cell, and the answers per second one worker sustains. Prints one JSON
line per size."""

from __future__ import annotations

import argparse
import json
import time

from apache_beam.coders import FastPrimitivesCoder

from transforms.open_keys import OpenKeysCapFn
from transforms.spec import StreamSpec

__all__ = ["run", "BytesCell", "BytesBag", "FakeTimer"]

_CODER = FastPrimitivesCoder()


class BytesCell:
    """A ReadModifyWrite cell stored as bytes (decoded on every read)."""

    def __init__(self):
        self.raw = None

    def read(self):
        return None if self.raw is None else _CODER.decode(self.raw)

    def write(self, v):
        self.raw = _CODER.encode(v)


class BytesBag:
    """A bag state stored as bytes."""

    def __init__(self):
        self.items = []

    def add(self, v):
        self.items.append(_CODER.encode(v))

    def read(self):
        return [_CODER.decode(b) for b in self.items]

    def clear(self):
        self.items = []


class FakeTimer:
    """A timer: the last time it was set to."""

    def __init__(self):
        self.at = None

    def set(self, ts):
        self.at = ts


def run(n: int, periods: int = 3, tick: float = 3600.0) -> dict:
    """``n`` keys selected at period 1 (all released: ``max_keys`` = ``n``), answering every period."""
    spec = StreamSpec(tick_seconds=tick, end_time=(periods + 1) * tick)
    fn = OpenKeysCapFn(spec, n)
    cell, nxt, bag, timer = BytesCell(), BytesCell(), BytesBag(), FakeTimer()
    keys = [f"k{i:07d}" for i in range(n)]
    per_period, out = [], 0
    for p in range(1, periods + 1):
        t0 = time.process_time()
        for key in keys:
            fn.process((0, (p, key, 100, 12.5)), cell=cell, pending=bag, timer=timer, nxt_cell=nxt)
        t1 = time.process_time()
        out += sum(1 for _ in fn.on_flush(ts=fn._flush_at(p), cell=cell, pending=bag, timer=timer, nxt_cell=nxt))
        t2 = time.process_time()
        per_period.append({"process_s": round(t1 - t0, 3), "flush_s": round(t2 - t1, 3)})
    assert out == n * periods
    worst = max(x["process_s"] + x["flush_s"] for x in per_period)
    return {
        "released_keys": n,
        "per_period": per_period,
        "cell_bytes": len(cell.raw),
        "worst_period_cpu_s": round(worst, 3),
        "answers_per_cpu_s": round(n / worst) if worst else None,
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--periods", type=int, default=3)
    a = ap.parse_args(argv)
    for n in a.sizes:
        print(json.dumps(run(n, a.periods)), flush=True)


if __name__ == "__main__":
    main()
