# ruff: noqa: B008 - Beam's stateful DoFn idiom: state and timer parameters are declared as defaults
"""The Beam collector of continual randomized response (Pan §6): reports in,
per-period unbiased histogram estimates out. No noise and no key: the clients
randomized their reports (``transforms/core/families/rr_client.py``); the estimate is
post-processing (``transforms/core/families/local_dp.py``, ``docs/local_dp.md``).

Wiring (``CollectRandomizedResponses``)::

  ReportRecord ── Validate ──► ((stream, entry, layer, tick), symbol) | dead letter
        declared stream, event time in [origin, end), layer whose node ends at the tick
  ── one report per (stream, entry, layer, tick): bounded: GroupByKey, the first
        in a fixed order kept; streaming: stateful, the first to arrive kept;
        the others are dead letters (``duplicate_report``)
  ── BundleCounts: per (stream, tick, layer) symbol counts, summed over the bundle
  ── per stream (``CollectStep`` in ``transforms.per_stream``, the step the
        release uses too): bounded: GroupByKey, the collector run to the
        configured end; streaming: stateful (versioned collector state, the wake
        and catch-up timers: tick t is released when the watermark passes the end
        of tick t + 1 + L, and carries that time whichever firing computed it);
        counts that reach a stream after their tick was released are dead
        letters (``late``), never folded into another period.

Outputs: ``estimates`` (:class:`~transforms.core.families.local_dp.RRRelease`, one per
declared stream per tick) and ``dead_letters`` (reason and the report as
received; counted as ``dead_letter_<reason>``).
"""

from __future__ import annotations

import csv
import io
import json
import typing
from typing import NamedTuple

import apache_beam as beam
from apache_beam.coders import BooleanCoder
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import StandardOptions
from apache_beam.transforms import window
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

import transforms.common as common
import transforms.state_cache  # noqa: F401  (user state: the SDK's cache without its scan of every module)
from transforms.core.config import DynamicConfig
from transforms.core.families.local_dp import RandomizedResponseCollector, RROptions, RRRelease, design_for
from transforms.core.families.rr_client import symbol_of
from transforms.per_stream import START, BoundedStreamFn, PerStreamStepFn, StreamStep, holds_timer_watermarks
from transforms.records import DeadLetter
from transforms.spec import NAMESPACE, StreamSpec, event_time_ok
from transforms.streaming import with_input_end
from transforms.validate import ValidateFn, tick_in_range

__all__ = [
    "ReportRecord",
    "ReportParser",
    "ReportCheck",
    "CollectStep",
    "CollectRandomizedResponses",
    "REPORT_REASONS",
    "release_dict",
]


REPORT_REASONS = {
    "unparseable": "not UTF-8, not JSON, not an object, a CSV row of the wrong width",
    "missing_field": "the time, id, old or new field is absent",
    "bad_time": "the time is not a finite number of seconds in the years 1 to 9999",
    "not_in_domain": "old or new is neither null nor a value of the answer domain",
    "malformed": "id not a non-empty string, layer not an integer, stream not a string",
    "undeclared_stream": "the stream field names a stream that is not declared",
    "before_origin": "the report's period starts before time.origin",
    "after_end": "the report's period is after time.end",
    "bad_layer": "no node of that layer ends at the report's period (layer >= h, or period % c^layer != 0)",
    "duplicate_report": "a second report of one entry for one node (layer, period)",
    "late": "the report reached its stream after that period was released (streaming)",
}


class ReportRecord(NamedTuple):
    """One client report as parsed: ``old`` / ``new`` are answer indices or None."""

    event_time: float
    entry_id: str
    layer: int
    old: int | None
    new: int | None
    stream: str = "default"
    raw: object = None


class ReportParser:
    """Input element -> (reason or None, ReportRecord or None). Never raises on data.

    Element forms: a JSON line (bytes or str), a CSV row (bytes, with
    ``csv_header``), an Avro record (dict), or a ``PubsubElement`` (JSON
    payload). Fields: the time field, ``id``, ``layer`` (default 0), ``old``
    and ``new`` (a value of the answer domain, or null / empty), and the
    stream field if configured."""

    def __init__(self, time_field: str, domain: tuple, stream_field: str | None = None, csv_header=None):
        self.time_field = time_field
        self.domain = tuple(domain)
        self.stream_field = stream_field
        self.csv_header = None if csv_header is None else tuple(csv_header)
        self._text = {_text(v): i for i, v in enumerate(self.domain)}

    def parse(self, element) -> tuple[str | None, ReportRecord | None]:
        raw = element
        d = None
        try:
            if isinstance(element, dict):
                d = element
            else:
                data = getattr(element, "data", element)
                if isinstance(data, (bytes, bytearray)):
                    data = bytes(data).decode("utf-8")
                if self.csv_header is not None and not hasattr(element, "data"):
                    row = next(csv.reader(io.StringIO(data)), None)
                    if row is None or len(row) != len(self.csv_header):
                        return "unparseable", None
                    d = {k: (None if v == "" else v) for k, v in zip(self.csv_header, row)}
                else:
                    d = json.loads(data)
        except (UnicodeDecodeError, ValueError, RecursionError, csv.Error):
            return "unparseable", None
        if not isinstance(d, dict):
            return "unparseable", None
        for key in (self.time_field, "id", "old", "new"):
            if key not in d:
                return "missing_field", None
        t = d[self.time_field]
        if isinstance(t, str):
            try:
                t = float(t)
            except ValueError:
                return "bad_time", None
        if not event_time_ok(t):
            return "bad_time", None
        entry = d["id"]
        if isinstance(entry, int) and not isinstance(entry, bool):
            entry = str(entry)
        if not isinstance(entry, str) or not entry:
            return "malformed", None
        layer = d.get("layer", 0)
        if isinstance(layer, str) and layer.strip().lstrip("-").isdigit():
            layer = int(layer)
        if layer is None:
            layer = 0
        if isinstance(layer, float) and layer.is_integer():
            layer = int(layer)
        if isinstance(layer, bool) or not isinstance(layer, int):
            return "malformed", None
        sides = []
        for key in ("old", "new"):
            v = d[key]
            if v is None:
                sides.append(None)
                continue
            idx = self._index(v)
            if idx is None:
                return "not_in_domain", None
            sides.append(idx)
        stream = "default"
        if self.stream_field is not None:
            if self.stream_field not in d:
                return "missing_field", None
            stream = d[self.stream_field]
            if not isinstance(stream, str):
                return "malformed", None
        return None, ReportRecord(float(t), entry, layer, sides[0], sides[1], stream, raw)

    def _index(self, v):
        for i, x in enumerate(self.domain):
            if type(v) is type(x) and v == x:
                return i
        if isinstance(v, (str, int, float)) and not isinstance(v, bool):
            return self._text.get(_text(v))
        return None


def _text(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _dead(reason: str, record, stage: str, stream=None) -> DeadLetter:
    Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
    return DeadLetter(reason, record, stage, stream if isinstance(stream, str) else None)


class ReportCheck:
    """A :class:`ReportRecord` (for ``transforms.validate.ValidateFn``): to ``((stream, entry, layer, tick),
    (symbol, raw))`` (``raw``: the input as received when it is text, for the dead letters)."""

    output_type = tuple[tuple[str, str, int, int], typing.Any]
    counter = None
    label = "_ValidateFn"

    def __init__(self, spec: StreamSpec, design):
        self.spec = spec
        self.z = design.domain_size
        self.layers = design.layers
        self.branching = design.branching
        self.streams = frozenset(spec.streams)

    def __call__(self, rec):
        reason, tick = self.reason(rec)
        if reason:
            return reason, None
        raw = rec.raw if isinstance(rec.raw, (str, bytes)) else None
        return None, ((rec.stream, rec.entry_id, rec.layer, tick), (symbol_of(rec.old, rec.new, self.z), raw))

    def reason(self, rec) -> tuple[str | None, int]:
        if not isinstance(rec, ReportRecord) or not isinstance(rec.entry_id, str) or not rec.entry_id:
            return "malformed", 0
        if rec.stream not in self.streams:
            return "undeclared_stream", 0
        if not event_time_ok(rec.event_time):
            return "bad_time", 0
        for v in (rec.old, rec.new):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < self.z):
                return "not_in_domain", 0
        reason, tick = tick_in_range(self.spec, rec.event_time)
        if reason:
            return reason, tick
        layer = rec.layer
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < self.layers:
            return "bad_layer", tick
        if tick % self.branching**layer:
            return "bad_layer", tick
        return None, tick


def _report_of(key, value) -> dict:
    """A validated report for its dead letter (the input as received if kept)."""
    stream, entry, layer, tick = key
    symbol, raw = value
    return raw if raw is not None else {"id": entry, "layer": layer, "tick": tick, "symbol": symbol, "stream": stream}


@beam.typehints.with_output_types(tuple[tuple[str, str, int, int], int])
class _FirstReportFn(beam.DoFn):
    """Bounded: one report per (stream, entry, layer, tick), the first in a fixed order."""

    DEAD = "dead_letters"

    def process(self, element):
        key, values = element
        values = sorted(values, key=lambda v: (v[0], repr(v[1])))
        yield key, values[0][0]
        for v in values[1:]:
            yield beam.pvalue.TaggedOutput(self.DEAD, _dead("duplicate_report", _report_of(key, v), "dedup", key[0]))


@beam.typehints.with_output_types(tuple[tuple[str, str, int, int], int])
class _DedupReportFn(beam.DoFn):
    """Streaming: one report per (stream, entry, layer, tick), the first to
    arrive; the key is remembered until its tick's release."""

    DEAD = "dead_letters"
    SEEN = ReadModifyWriteStateSpec("seen", BooleanCoder())
    EXPIRE = TimerSpec("expire", TimeDomain.WATERMARK)

    def __init__(self, spec: StreamSpec):
        self.spec = spec

    def process(
        self,
        element,
        seen=beam.DoFn.StateParam(SEEN),
        expire=beam.DoFn.TimerParam(EXPIRE),
    ):
        key, value = element
        if seen.read():
            yield beam.pvalue.TaggedOutput(
                self.DEAD, _dead("duplicate_report", _report_of(key, value), "dedup", key[0])
            )
            return
        seen.write(True)
        expire.set(self.spec.final_at(key[3] + 1))  # a tick after its tick's release
        yield key, value[0]

    @on_timer(EXPIRE)
    def on_expire(self, seen=beam.DoFn.StateParam(SEEN)):
        seen.clear()


@beam.typehints.with_output_types(tuple[str, typing.Any])
class _BundleCountsFn(beam.DoFn):
    """Sums the reports per (stream, tick, layer) over the bundle; emits
    ``(stream, ((tick, layer, counts), ...))`` at the end of the bundle."""

    def __init__(self, spec: StreamSpec, num_symbols: int, bounded: bool):
        self.spec = spec
        self.m = num_symbols
        self.bounded = bounded
        self.accepted = Metrics.counter(NAMESPACE, "reports_accepted")

    def start_bundle(self):
        self.acc = {}
        self.n = 0

    def process(self, element):
        (stream, _, layer, tick), symbol = element
        counts = self.acc.setdefault(stream, {}).get((tick, layer))
        if counts is None:
            counts = self.acc[stream][(tick, layer)] = [0] * self.m
        counts[symbol] += 1
        self.n += 1

    def finish_bundle(self):
        if self.n:
            self.accepted.inc(self.n)
        glob = (window.GlobalWindow(),)
        for stream, parts in self.acc.items():
            aggs = tuple((t, layer, tuple(c)) for (t, layer), c in sorted(parts.items()))
            ts = MIN_TIMESTAMP if self.bounded else self.spec.closes_at(aggs[0][0])
            yield WindowedValue((stream, aggs), ts, glob)
        self.acc = {}


def _merge(parts) -> dict[int, dict[int, list[int]]]:
    out: dict[int, dict[int, list[int]]] = {}
    for aggs in parts:
        for tick, layer, counts in aggs:
            cur = out.setdefault(tick, {}).get(layer)
            if cur is None:
                out[tick][layer] = list(counts)
            else:
                for s, c in enumerate(counts):
                    cur[s] += c
    return out


class CollectStep(StreamStep):
    """The collector's per-stream step (``transforms.per_stream``): one
    :class:`~transforms.core.families.local_dp.RandomizedResponseCollector` per
    stream; a wake applies the counts of the ticks due (tick t is released when
    its input is final: the watermark past the end of tick t + 1 + L) and
    releases every tick up to its own; counts that reach a stream after their
    tick was released are dead letters (``late``), never folded into another
    period. Emits :class:`~transforms.core.families.local_dp.RRRelease`, each
    with its tick's time, and dead letters on ``DEAD``."""

    output_type = RRRelease
    stream_label, bounded_label = "_CollectStreamFn", "_CollectBoundedFn"
    DEAD = "dead_letters"

    def __init__(self, config: DynamicConfig, options: RROptions, spec: StreamSpec):
        super().__init__(spec)
        self.config, self.options = config, options

    def new_core(self, stream):
        return RandomizedResponseCollector(
            self.config, stream=stream, end_tick=self.spec.end_tick, options=self.options
        )

    def restore(self, stream, state):
        return RandomizedResponseCollector.from_state(
            self.config, state, options=self.options, end_tick=self.spec.end_tick
        )

    def wake(self, core, tick, aggs, queries, out):
        late = [agg for agg in aggs if agg[0] <= core.last_tick]
        self.discard(core, late, out)
        self.feed(core, [[agg for agg in aggs if agg[0] > core.last_tick]], (), out)
        if tick > core.last_tick:
            out += core.advance(tick if core.end_tick is None else min(tick, core.end_tick))

    def discard(self, core, aggs, out):
        for t, layer, counts in aggs:
            n = sum(counts)
            Metrics.counter(NAMESPACE, "dead_letter_late").inc(n)
            out.append(DeadLetter("late", {"tick": t, "layer": layer, "reports": n}, "collect", core.stream))

    def feed(self, core, parts, queries, out):
        by_tick = _merge(parts)
        for t in sorted(by_tick):
            out += core.apply(t, by_tick[t])

    def run_to_end(self, core, out):
        out += core.run_to_end()

    def bounded(self, core, parts, queries, stamp):
        """``feed``, ``run_to_end`` and ``emit``'s records, the same in the same order, computed as they leave
        (as ``ReleaseStep.bounded``): ``BOUNDED_BLOCK_RESULTS`` releases at a time, and a stretch without reports
        advanced ``BOUNDED_STEP_TICKS`` ticks a call (the collector releases tick by tick either way), so the
        step never holds a run's releases at once."""
        for block in common.in_blocks(self._bounded_results(core, parts)):
            yield from self.emit(core, block, stamp)

    def _bounded_results(self, core, parts):
        by_tick = _merge(parts)
        for t in sorted(by_tick):
            yield from _advance_in_steps(core, t - 1)
            yield from core.apply(t, by_tick[t])
        yield from _advance_in_steps(core, core.end_tick)
        yield from core.run_to_end()

    def emit(self, core, out, stamp):
        released = [r for r in out if isinstance(r, RRRelease)]
        if released:
            Metrics.counter(NAMESPACE, "releases_written").inc(len(released))
        for r in out:
            if isinstance(r, DeadLetter):
                yield beam.pvalue.TaggedOutput(self.DEAD, r)
            else:
                yield beam.window.TimestampedValue(r, stamp(r.tick))


def _advance_in_steps(core, upto: int):
    while not core.finished and core.last_tick < upto:
        yield from core.advance(min(core.last_tick + common.BOUNDED_STEP_TICKS, upto))


class CollectRandomizedResponses(beam.PTransform):
    """Reports (:class:`ReportRecord`, timestamped by event time) -> per-period
    unbiased histogram estimates, per declared stream. No noise is added and
    no key is needed: the privacy is local (the clients'), see ``docs/local_dp.md``.

    Args:
      config: one histogram query set (the answer domain) and the entry's
        total local budget (``PureDP`` or ``ApproxDP``), beta.
      spec: streams, ticks (= periods), origin, end (required for bounded
        input), allowed lateness.
      options: :class:`~transforms.core.families.local_dp.RROptions`.
    """

    def __init__(self, config: DynamicConfig, spec: StreamSpec, options: RROptions | None = None):
        super().__init__()
        self.config = config
        self.spec = spec
        self.options = RROptions() if options is None else options
        self.design = design_for(config, self.options)

    def expand(self, reports):
        spec = self.spec
        streaming = reports.pipeline.options.view_as(StandardOptions).streaming
        bounded = reports.is_bounded and not streaming
        if bounded and spec.end_tick is None:
            raise ValueError("bounded input needs a configured end: StreamSpec(end_time=...) (time.end)")
        valid = reports | "ValidateReports" >> beam.ParDo(ValidateFn(ReportCheck(spec, self.design))).with_outputs(
            ValidateFn.DEAD, main="valid"
        )
        if bounded:
            deduped = (
                valid.valid
                | "GroupByNode" >> beam.GroupByKey()
                | "FirstReport" >> beam.ParDo(_FirstReportFn()).with_outputs(_FirstReportFn.DEAD, main="reports")
            )
        else:
            deduped = valid.valid | "Deduplicate" >> beam.ParDo(_DedupReportFn(spec)).with_outputs(
                _DedupReportFn.DEAD, main="reports"
            )
        counts = deduped.reports | "BundleCounts" >> beam.ParDo(_BundleCountsFn(spec, self.design.num_symbols, bounded))
        starts = reports.pipeline | "DeclaredStreams" >> beam.Create(
            [(s, START) for s in spec.streams], reshuffle=False
        )
        counts = (counts, starts) | "AllCounts" >> beam.Flatten()
        step = CollectStep(self.config, self.options, spec)
        if bounded:
            counts = counts | "GroupByStream" >> beam.GroupByKey()
            fn = BoundedStreamFn(step)
        else:
            counts = with_input_end(counts, spec)
            fn = PerStreamStepFn(step, catch_up=holds_timer_watermarks(reports.pipeline))
        collected = counts | "Collect" >> beam.ParDo(fn).with_outputs(CollectStep.DEAD, main="estimates")
        dead = (valid[ValidateFn.DEAD], deduped[_FirstReportFn.DEAD], collected[CollectStep.DEAD])
        return {"estimates": collected.estimates, "dead_letters": dead | "ReportDeadLetters" >> beam.Flatten()}


def release_dict(rel: RRRelease, domain: tuple, query: str, spec: StreamSpec) -> dict:
    """A release as written (JSON lines): cells by domain value."""
    names = [str(v) for v in domain]

    def cells(values):
        return {n: float(v) for n, v in zip(names, values)}

    return {
        "stream": rel.stream,
        "tick": rel.tick,
        "as_of": spec.as_of(rel.tick),
        "query": query,
        "estimate": cells(rel.estimate),
        "variance": cells(rel.variance),
        "error_bound": rel.error_bound,
        "change": cells(rel.change),
        "change_variance": cells(rel.change_variance),
        "change_bound": rel.change_bound,
        "reports": rel.reports,
        "change_reports": rel.change_reports,
        "beta": rel.beta,
        "epsilon_entry": rel.epsilon_entry,
        "delta_entry": rel.delta_entry,
        "trust": "local",
    }
