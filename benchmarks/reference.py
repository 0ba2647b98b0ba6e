"""The fair reference of issue 30: a plain, non-private Beam pipeline that computes exactly what the default
release computes (``configs/demo.yaml``: an answer for every query, every period), without privacy.

Read the JSON lines, parse each update (the demo's fields: time, op, id, item.carrier, item.amount, region,
seq), group each entry's updates to resolve upserts and deletes in (tick, seq) order (an insert of a live
entry, an upsert or delete of an entry that is not live are dropped, as the release's registry drops them to
its dead letters), turn them into per-period changes of the count, the carrier histogram and the amount sum,
add them up per (stream, period) (over each bundle, then per stream), and write the running totals of every
period from 1 to the configured end, one JSON line per (stream, period, query), as the release writes its records.

The answers are the release's with its noise switched off (``privacy.disable_noise: true``):
``tests/test_bench_reference.py`` checks it. The amount is rounded to the release's 101 levels in
``[lower, upper]`` (``pipelines.parse.SUM_BUCKETS``), so the sum is the release's sum of the rounded values.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.transforms import window
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

__all__ = [
    "Demo",
    "ResolveAndSum",
    "demo_yaml",
    "parse_update",
    "reference_pipeline",
    "resolve_entry",
    "running_totals",
]

_OPS = ("insert", "upsert", "delete")


@dataclass(frozen=True)
class Demo:
    """The public configuration of the demo-like release (the reference needs the same)."""

    end: float  # time.end (seconds; origin 0)
    tick_seconds: float = 600.0
    streams: tuple = ("eu", "us")
    carriers: tuple = ("AA", "B6", "DL")
    lower: float = 0.0
    upper: float = 150.0
    buckets: int = 101  # pipelines.parse.SUM_BUCKETS

    @property
    def end_tick(self) -> int:
        return max(1, math.ceil(self.end / self.tick_seconds))

    def level_value(self, level: int) -> float:
        return self.lower + level * (self.upper - self.lower) / (self.buckets - 1)


def demo_yaml(demo: Demo, source: str, out: str, *, disable_noise: bool = False) -> str:
    """``configs/demo.yaml`` with this input, output folder and end (the DP side of the comparison)."""
    noise = ", disable_noise: true" if disable_noise else ""
    return (
        f"privacy: {{epsilon: 1.0, delta: 0.0, unit: update{noise}}}\n"
        f"time: {{field: time, tick_seconds: {demo.tick_seconds:g}, origin: 0, end: {demo.end:.0f}}}\n"
        f"streams: {{field: region, keys: [{', '.join(demo.streams)}]}}\n"
        "mechanism: {kind: auto}\n"
        "release: {every_ticks: 1}\n"
        "queries:\n"
        "  - {name: active, type: count}\n"
        f"  - {{name: by_carrier, type: histogram, field: carrier, domain: [{', '.join(demo.carriers)}]}}\n"
        f"  - {{name: total_amount, type: sum, field: amount, lower: {demo.lower:g}, upper: {demo.upper:g}}}\n"
        f"source: {{type: file, path: {source}, format: jsonl}}\n"
        f"sinks:\n  - {{type: file, path: {out}, format: jsonl}}\n"
    )


def parse_update(line: str, demo: Demo):
    """``((stream, id), (tick, seq, op, carrier index, amount level))``; nothing for a line the release
    rejects (unparseable, unknown op, undeclared stream, carrier outside the domain, time outside the run)."""
    try:
        d = json.loads(line)
    except ValueError:
        return
    if not isinstance(d, dict):
        return
    stream, op, t = d.get("region"), d.get("op"), d.get("time")
    if stream not in demo.streams or op not in _OPS or not isinstance(t, (int, float)):
        return
    tick = int(t // demo.tick_seconds) + 1
    if tick < 1 or tick > demo.end_tick:
        return
    carrier = level = None
    if op != "delete":
        item = d.get("item") or {}
        if item.get("carrier") not in demo.carriers or not isinstance(item.get("amount"), (int, float)):
            return
        carrier = demo.carriers.index(item["carrier"])
        clamped = min(max(float(item["amount"]), demo.lower), demo.upper)
        level = int(round((clamped - demo.lower) / (demo.upper - demo.lower) * (demo.buckets - 1)))
    yield (stream, d["id"]), (tick, d.get("seq", 0), op, carrier, level)


def resolve_entry(kv, n_carriers: int):
    """One entry's updates in (tick, seq) order -> ``((stream, tick), change)`` where ``change`` is
    ``(count, carrier counts..., amount levels)``, one per accepted update."""
    (stream, _), updates = kv
    live = None  # (carrier, level) of the live version
    for tick, _, op, carrier, level in sorted(updates, key=lambda u: (u[0], u[1])):
        if op == "insert":
            if live is not None:
                continue
            new = (carrier, level)
        elif live is None:
            continue
        else:
            new = None if op == "delete" else (carrier, level)
        change = [0] * (n_carriers + 2)
        if live is not None:
            change[0] -= 1
            change[1 + live[0]] -= 1
            change[-1] -= live[1]
        if new is not None:
            change[0] += 1
            change[1 + new[0]] += 1
            change[-1] += new[1]
        live = new
        yield (stream, tick), tuple(change)


class ResolveAndSum(beam.DoFn):
    """:func:`resolve_entry` for each entry, the changes summed per (stream, period) over the bundle (the
    pre-aggregation a lifted combiner does; the release's registry does the same), out at the bundle's end as
    ``(stream, (tick, change))``."""

    def __init__(self, n_carriers: int):
        self.n_carriers = n_carriers

    def start_bundle(self):
        self.acc = {}

    def process(self, kv):
        acc = self.acc
        for key, change in resolve_entry(kv, self.n_carriers):
            cur = acc.get(key)
            acc[key] = change if cur is None else tuple(a + b for a, b in zip(cur, change))
        return ()

    def finish_bundle(self):
        acc, self.acc = self.acc, {}
        for (stream, tick), change in acc.items():
            yield WindowedValue((stream, (tick, change)), MIN_TIMESTAMP, (window.GlobalWindow(),))


def running_totals(kv, demo: Demo):
    """All of a stream's per-period changes -> the running totals of every period 1..end, as JSON lines."""
    stream, values = kv
    changes: dict = {}
    for v in values:
        if v is not None:
            cur = changes.get(v[0])
            changes[v[0]] = v[1] if cur is None else tuple(a + b for a, b in zip(cur, v[1]))
    total = [0] * (len(demo.carriers) + 2)
    step = (demo.upper - demo.lower) / (demo.buckets - 1)
    for tick in range(1, demo.end_tick + 1):
        change = changes.get(tick)
        if change is not None:
            total = [a + b for a, b in zip(total, change)]
        count = total[0]
        hist = {c: float(n) for c, n in zip(demo.carriers, total[1:-1])}
        amount = demo.lower * count + step * total[-1]
        for query, estimate in (("active", float(count)), ("by_carrier", hist), ("total_amount", amount)):
            yield json.dumps({"stream": stream, "tick": tick, "query": query, "estimate": estimate})


def reference_pipeline(lines, demo: Demo, out_prefix: str | None):
    """The reference's transforms after ``lines`` (a PCollection of text lines); writes to ``out_prefix``
    (JSON lines) or returns the output PCollection when it is None."""
    n = len(demo.carriers)
    declared = lines.pipeline | "Declared" >> beam.Create([(s, None) for s in demo.streams])
    changes = (
        lines
        | "Parse" >> beam.FlatMap(parse_update, demo)
        | "GroupByEntry" >> beam.GroupByKey()
        | "ResolveAndSum" >> beam.ParDo(ResolveAndSum(n))
    )
    out = (
        (changes, declared)
        | "Merge" >> beam.Flatten()
        | "GroupByStream" >> beam.GroupByKey()
        | "RunningTotals" >> beam.FlatMap(running_totals, demo)
    )
    if out_prefix is None:
        return out
    return out | "Write" >> beam.io.WriteToText(out_prefix, file_name_suffix=".jsonl")
