"""The release pipeline's wiring: source -> parse -> release -> sinks (:func:`build_pipeline`).

The source and the sinks come from the IO registry (``pipelines.io``) through the configuration; this module
never asks which type they are. Step labels are stable names (a Flink savepoint maps state by them).
"""

from __future__ import annotations

import logging

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import StandardOptions
from apache_beam.transforms.window import GlobalWindow, GlobalWindows
from apache_beam.utils.timestamp import Timestamp
from apache_beam.utils.windowed_value import WindowedValue

import transforms.coders  # noqa: F401  (registers UpdateChunk's coder, which types the Parse output below)
from pipelines.io import OUTPUTS
from pipelines.io.lines import ReadLineChunks
from pipelines.manifest import release_identity
from pipelines.outputs import ReleaseFormat, dead_dict, node_dict
from pipelines.parse import Parsed, RecordParser
from pipelines.parse_lines import line_parser, line_records
from transforms.core.foundation.noise import ReleaseIdentity
from transforms.records import DeadLetter, NoiseKey, UpdateChunk, UpdateRecord
from transforms.releases import ReleaseContinually
from transforms.spec import NAMESPACE, StreamSpec

__all__ = [
    "build_pipeline",
    "parse_line",
    "fast_parse",
    "parsed_outputs",
    "count_clamped",
    "stream_spec",
    "write_outputs",
    "PROGRESS",
    "PROGRESS_EVERY",
]

#: progress lines of long runs (counts only, never payloads); the CLI shows them on stderr
PROGRESS = logging.getLogger("dp_dynamic.progress")
PROGRESS_EVERY = 100_000  # records read by a worker between two progress lines


class _ParseFn(beam.DoFn):
    """An input element (a line of a JSON-lines or CSV file as bytes, an Avro
    record as a dict, or a :class:`~pipelines.parse.PubsubElement`) ->
    UpdateRecord with its item encoded for the query sets
    (:class:`pipelines.parse.RecordParser`).

    Whatever the element holds, it leaves as a record or as a dead letter with
    a reason and the element as received (never as an exception; the payload is
    never logged). With ``source.dedup`` the records leave keyed by their update
    id, for :class:`_DropDuplicatesFn`.

    ``global_window``: the source's elements are in the global windowing (``build_pipeline`` checks it at
    construction); a record then leaves as the windowed value Beam would make of it (``parsed_outputs``).
    ``chunked``: each element is a list of lines (``Source.read_chunks``), parsed line after line; ``lists``
    (with ``chunked``): a chunk's records leave as one list, for ``ReleaseContinually``'s validation in a batch
    run (``ValidateFn(check, chunks)``), its dead letters one by one."""

    DEAD = "dead_letters"

    def __init__(
        self,
        cfg,
        csv_header=None,
        timestamp_attribute=None,
        max_future_seconds=None,
        global_window=False,
        chunked=False,
        lists=False,
    ):
        self.cfg = cfg
        self.global_window = global_window
        self.chunked = chunked  # each element is a list of input elements (``Source.read_chunks``)
        # a chunk's updates leave as one list (the next step, ``ReleaseContinually``'s validation in a bounded
        # run, takes a list as a chunk of records: one element through Beam instead of one per update)
        self.lists = lists and chunked
        self.csv_header = csv_header
        self.timestamp_attribute = timestamp_attribute  # Pub/Sub: the event time is this attribute
        self.max_future_seconds = max_future_seconds
        self.read = Metrics.counter(NAMESPACE, "records_read")
        self.seen = 0
        self.in_bundle = 0
        self.parser = self.fast = None

    def setup(self):
        self.parser = RecordParser(
            self.cfg,
            self.csv_header,
            timestamp_attribute=self.timestamp_attribute,
            max_future_seconds=self.max_future_seconds,
        )
        self.records = line_records(self.parser)  # the JSON-lines shortcut, compiled once
        self.fast = line_parser(self.parser, self.records)

    def start_bundle(self):
        self.in_bundle = 0

    def finish_bundle(self):
        if self.in_bundle:  # one metric update per bundle, not per element (ValidateFn does the same)
            self.read.inc(self.in_bundle)
        self.in_bundle = 0

    def process(self, element):
        return self._each(element if self.chunked else (element,))  # a chunk of lines: line after line

    def _each(self, elements):
        """Input elements (a chunk's lines, or one element), parsed in one loop: the counts once per call, every
        progress line a multiple of ``PROGRESS_EVERY`` crosses, the common output (an update, nothing clamped, no
        dedup key, in the global window) made here (``parsed_outputs``' own), with ``lists`` a chunk's records as
        one list."""
        if self.parser is None:
            self.setup()
        before = self.seen
        self.in_bundle += len(elements)
        self.seen += len(elements)
        for k in range(before // PROGRESS_EVERY + 1, self.seen // PROGRESS_EVERY + 1):  # a line per multiple crossed
            PROGRESS.info("records read by this worker: %d", k * PROGRESS_EVERY)  # counts only, never payloads
        fast, parse, dedup, global_window = self.fast, self.parser.parse, self.parser.dedup_field, self.global_window
        if self.lists and not dedup:
            records = UpdateChunk()  # its own coder (transforms.coders): the Parse output is typed with it
            shortcut, append = self.records, records.append
            for element in elements:
                parsed = shortcut(element)
                if type(parsed) is UpdateRecord:  # the common case: a record, nothing clamped
                    append(parsed)
                    continue
                parsed = parsed or parse(element)
                if parsed.reason:
                    yield from parsed_outputs(parsed, self.DEAD, dedup, global_window)  # its dead letter
                else:
                    count_clamped(parsed)
                    records.append(parsed.record)
            if records:
                yield records
            return
        plain = global_window and not dedup
        for element in elements:
            parsed = fast(element) or parse(element)
            if plain and not parsed.reason and not parsed.clamped:
                rec = parsed.record
                yield WindowedValue(rec, Timestamp.of(rec.event_time), _GLOBAL_WINDOWS)
            else:
                yield from parsed_outputs(parsed, self.DEAD, dedup, global_window)


class _DropDuplicatesFn(beam.DoFn):
    """``source.dedup`` on files: one update per update id (the first in a
    fixed order of the records as received, so line order does not matter);
    the others are counted (``duplicates_dropped``), as on Pub/Sub."""

    def process(self, element):
        _, records = element
        records = list(records)
        if len(records) > 1:
            Metrics.counter(NAMESPACE, "duplicates_dropped").inc(len(records) - 1)
            records.sort(key=lambda r: (r.event_time, r.seq, repr(r.raw)))
        rec = records[0]
        yield beam.window.TimestampedValue(rec, rec.event_time)


# made once (a metric resolves the running step's container when it is updated): one release record is
# counted per call, a million for a year of one-minute periods
_RELEASES_WRITTEN = Metrics.counter(NAMESPACE, "releases_written")
_SPENT_WRITTEN = Metrics.distribution(NAMESPACE, "budget_spent_written_micro")


class _CountReleasesFn(beam.DoFn):
    """Counts the releases and the budget spent where every runner reports
    metrics (some runners drop counters incremented in timer callbacks)."""

    def process(self, rel):
        _RELEASES_WRITTEN.inc()
        _SPENT_WRITTEN.update(int(rel.spent[0] * 1e6))
        return ()  # outputs nothing (a None here makes Beam warn about every bundle)


def fast_parse(parser: RecordParser, element) -> Parsed | None:
    """``parser.parse(element)`` for the common case of a JSON-lines file, or None (then ``parser.parse``
    decides): :func:`pipelines.parse_lines.line_parser`, compiled for this call (the parse step compiles it once).
    ~35% less CPU per line of the demo's input than ``parser.parse`` (json.loads is half of what is left)."""
    return line_parser(parser)(element)


def parse_line(cfg, line):
    """(reason, UpdateRecord) for one JSON input line (for tests and tools)."""
    parsed = RecordParser(cfg).parse(line)
    return parsed.reason, parsed.record


#: the windows of an element in the global windowing (``GlobalWindow`` is a singleton; one tuple for all)
_GLOBAL_WINDOWS = (GlobalWindow(),)


def parsed_outputs(parsed, dead_tag: str, dedup: bool, global_window: bool = False):
    """What a parse step emits for one parsed record: a dead letter on ``dead_tag`` (with its reason's counter),
    or the update timestamped at its event time (keyed by its dedup key with ``dedup``); the clamp counters.

    ``global_window`` (only for a step whose input is in the global windowing): the update leaves as
    ``WindowedValue(value, Timestamp.of(event time), (GlobalWindow(),))``, which is what Beam's runner makes of
    the ``TimestampedValue`` there (``GlobalWindows.assign``: an assign context and a ``GlobalWindow`` per
    element, ~4% of a 10^6-update release), made here directly: the same element, timestamp and window."""
    if parsed.reason:
        Metrics.counter(NAMESPACE, f"dead_letter_{parsed.reason}").inc()
        yield beam.pvalue.TaggedOutput(dead_tag, DeadLetter(parsed.reason, parsed.raw, "parse", parsed.stream))
        return
    count_clamped(parsed)
    rec = parsed.record
    value = (parsed.dedup_key, rec) if dedup else rec
    if global_window:
        yield WindowedValue(value, Timestamp.of(rec.event_time), _GLOBAL_WINDOWS)
    else:
        yield beam.window.TimestampedValue(value, rec.event_time)


def count_clamped(parsed) -> None:
    """The counters of a parsed update's sum values that were outside ``[lower, upper]`` (counts only)."""
    for name in parsed.clamped:
        Metrics.counter(NAMESPACE, f"sum_clamped_{name}").inc()


def stream_spec(cfg) -> StreamSpec:
    """The time and stream layout of the configured release."""
    return StreamSpec(
        streams=cfg.streams or ("open",),  # open keys (issue 33): no declared stream; the spec's ticks only
        tick_seconds=cfg.tick_seconds,
        origin=cfg.origin,
        late_policy=cfg.late_policy,
        allowed_lateness=cfg.allowed_lateness,
        end_time=cfg.end,
        every_ticks=cfg.every_ticks,
    )


def build_pipeline(p: beam.Pipeline, cfg, noise_key: NoiseKey, release: ReleaseIdentity | None = None):
    """Wire source -> parse -> release -> sinks into ``p``; returns where the outputs go.

    ``release``: the release identity (default :func:`~pipelines.manifest.release_identity`)."""
    release = release if release is not None else release_identity(cfg)
    read = cfg.source.read_chunks(p, cfg)  # a file of lines: in chunks (pipelines.io.lines)
    # the sources read in the global windowing; checked here, at construction, from the graph (a source in
    # any other windowing gets TimestampedValues and Beam's own window assignment)
    global_window = isinstance(read.pcoll.windowing.windowfn, GlobalWindows)
    # updates in lists only into ReleaseContinually's bounded path (its validation takes a list as a chunk):
    # not into the open keys' or the streamed queries' steps, not with dedup (keyed records), not when streaming
    lists = not (
        cfg.open_keys
        or cfg.queries_source is not None
        or cfg.source.dedup_field
        or p.options.view_as(StandardOptions).streaming
    )
    parse = _ParseFn(
        cfg, read.csv_header, read.timestamp_attribute, read.max_future_seconds, global_window, read.chunked, lists
    )
    parse_step = beam.ParDo(parse)
    # the records leave in chunks, encoded (and their size estimated) by UpdateChunkCoder, not pickled
    if parse.lists:
        parse_step = parse_step.with_output_types(UpdateChunk)
    parsed = read.pcoll | "Parse" >> parse_step.with_outputs(_ParseFn.DEAD, main="records")
    records = parsed.records
    if cfg.source.dedup_field:
        records = (
            records
            | "GroupByUpdateId" >> beam.GroupByKey()
            | "DropDuplicates" >> beam.ParDo(_DropDuplicatesFn()).with_output_types(UpdateRecord)
        )
    spec = stream_spec(cfg)
    release_args = dict(
        options=cfg.mechanism_options(),
        release=release,
        consistency=cfg.consistency(),
        registry_shards=cfg.registry_shards,
    )
    query_dead = []
    if cfg.open_keys:  # streams: {keys: open} (issue 33): its own step, records in the same format
        from pipelines.open_keys import open_release_dict, release_open_keys

        out = release_open_keys(records, cfg, spec, noise_key, release)
        dead = (parsed[_ParseFn.DEAD], out["dead_letters"]) | "AllDeadLetters" >> beam.Flatten()
        out["answers"] | "CountOpenKeyReleases" >> beam.Map(_count_release)
        outputs = {
            "releases": (out["answers"], open_release_dict(cfg, spec)),
            "dead_letters": (dead, lambda d: dead_dict(cfg, d)),
        }
        return write_outputs(cfg, outputs, release_id=release.release_id)
    if cfg.queries_source is not None:
        # streamed linear queries, answered by PMWG as of their arrival (docs/growing.md)
        from pipelines.submit_queries import read_queries
        from transforms.queries import AnswerQueries

        queries, bad_queries = read_queries(p, cfg)
        out = (records, queries) | "Release" >> AnswerQueries(cfg.dynamic_config(), spec, noise_key, **release_args)
        query_dead = [bad_queries]
    else:
        transform = ReleaseContinually(
            cfg.mechanism,
            cfg.dynamic_config(),
            spec,
            noise_key,
            raw_lines=_raw_lines(cfg, read),
            **release_args,
        )
        out = records | "Release" >> transform
    dead = (parsed[_ParseFn.DEAD], out["dead_letters"], *query_dead) | "AllDeadLetters" >> beam.Flatten()
    out["answers"] | "CountReleases" >> beam.ParDo(_CountReleasesFn())
    # the differentially private outputs go to a sink's folder or topics; dead letters (raw records:
    # confidential operator data) apart
    outputs = {
        "releases": (out["answers"], ReleaseFormat(cfg)),  # release_dict, its look-ups done once
        "nodes": (out["nodes"], node_dict),
        "dead_letters": (dead, lambda d: dead_dict(cfg, d)),
    }
    if "query_answers" in out:  # the answers to streamed queries (queries_source)
        from pipelines.submit_queries import answer_dict

        outputs["query_answers"] = (out["query_answers"], lambda a: answer_dict(cfg, a))
    return write_outputs(cfg, outputs, release_id=release.release_id)


def _raw_lines(cfg, read):
    """For the lines of text files (JSON lines, CSV: ``Elements.lines_of``, a bounded read in chunks), a second
    read of those files for the release's dead letters (``ReleaseContinually``'s ``raw_lines``: the lines then
    stay out of the entry shuffle, issue 30); None for any other source (Avro records, messages, a followed file):
    the records travel with their updates as before. Asked of what was read, not of the source's type."""
    if read.lines_of is None or read.timestamp_attribute:
        return None
    return _ReadAgain.reader(*read.lines_of)


class _ReadAgain:
    """The text files read again for the dead letters (``ReleaseContinually``'s ``raw_lines``), as the release
    read them (:class:`~pipelines.io.lines.ReadLineChunks`: the same lines, in chunks), in ranges of
    ``BUNDLE_BYTES`` read in parallel. ``needed`` (a singleton side input: how many lines the dead letters want):
    with 0 nothing is read (~1.8 s of 10^6 lines saved when the registry refuses nothing). The lines read are
    counted (``source_lines_reread``)."""

    BUNDLE_BYTES = 64 << 20

    @classmethod
    def reader(cls, pattern: str, skip_header_lines: int):
        """The ``raw_lines`` callable of ``ReleaseContinually``: ``(pipeline, needed) -> chunks of lines``."""
        return lambda pipeline, needed=None: (
            pipeline
            | "ReadSourceAgain"
            >> ReadLineChunks(
                pattern,
                skip_header_lines,
                bundle_bytes=cls.BUNDLE_BYTES,
                needed=needed,
                counter=(NAMESPACE, "source_lines_reread"),
            )
        )


def _count_release(_) -> None:
    _RELEASES_WRITTEN.inc()


def write_outputs(cfg, outputs: dict, avro: bool = True, release_id: str | None = None) -> list[str]:
    """Each output (name -> (PCollection, to_dict)) to every sink that takes it; returns where they go.
    ``avro``: the outputs have their published Avro schemas (an Avro file sink writes them so; else JSON
    lines). ``release_id``: every record carries it (its last field, ``release_id``), so that anyone can tell
    which release a record belongs to."""
    written = []
    for i, sink in enumerate(cfg.sinks):
        for name, (pcoll, to_dict) in outputs.items():
            if not sink.takes(name):
                continue
            stamped = (
                ReleaseFormat(to_dict.cfg, release_id)  # adds the id itself (no copy of each record)
                if type(to_dict) is ReleaseFormat and to_dict.release_id is None
                else _Stamped(to_dict, release_id)
            )
            records = pcoll | f"Format{name}{i}" >> beam.Map(stamped)
            written.append(
                sink.write(
                    records,
                    name,
                    label=f"{name}{i}",
                    streaming=cfg.streaming,
                    schema=OUTPUTS[name][0] if avro else None,
                )
            )
    return written


class _Stamped:
    """``to_dict`` with the release id added to each record (None: the record as ``to_dict`` makes it)."""

    def __init__(self, to_dict, release_id: str | None):
        self.to_dict, self.release_id = to_dict, release_id

    def __call__(self, element) -> dict:
        d = dict(self.to_dict(element))
        if self.release_id is not None:
            d["release_id"] = self.release_id
        return d
