"""An unbounded source that runs on Flink from Python: JSON lines appended to files, followed.

Beam's Python ``ReadFromPubSub`` runs only on the DirectRunner and Dataflow, and the cross-language Kafka and
Pub/Sub IOs need Java expansion services that Maven Central (as these machines reach it) does not serve for a
Beam release the job server matches (``docs/flink.md``). This source is a splittable ``DoFn`` in plain Python,
so every portable runner runs it: each file is read from its start and then followed (like ``tail -f``); a
file that ends with the line ``END_MARKER`` is finished there. The restriction is a byte offset (a checkpoint or
savepoint holds the position of the next line, so a restored job resumes where it stopped); the watermark is
the event time of the lines read (their ``time`` field), held back by ``max_disorder_seconds``. Lines leave as
bytes with their event time as timestamp, exactly what the pipeline's parse step takes from a file source.

``ReadFollowing("updates/*.jsonl")`` (the files are matched when the pipeline is built); in a configuration,
``source: {type: follow, path, max_disorder_seconds}`` (:class:`FollowSource`).
"""

from __future__ import annotations

import glob
import json
import sys
import time
from collections.abc import Callable
from typing import Annotated, ClassVar, Literal

import apache_beam as beam
from apache_beam.io.restriction_trackers import OffsetRange, OffsetRestrictionTracker
from apache_beam.io.watermark_estimators import ManualWatermarkEstimator
from apache_beam.transforms.core import RestrictionProvider
from apache_beam.utils.timestamp import Duration, Timestamp
from pydantic import BeforeValidator, ValidationInfo, field_validator

import pipelines.io.fnapi_metrics  # noqa: F401  (the FnApiRunner past a thousand reads: see the module)
from pipelines.io.base import PUBLIC_SCHEDULE, Elements, Fraction, Source
from pipelines.io.files import check_source_file, source_files
from pipelines.model import choice, issue, span, text
from transforms.per_stream import holds_timer_watermarks

__all__ = ["FollowSource", "ReadFollowing", "FollowFileFn", "END_MARKER", "MAX_SECONDS_PER_READ", "json_time"]

#: A line holding exactly this finishes a followed file (the release then ends at its configured end).
END_MARKER = b"#END"

_UNBOUNDED = sys.maxsize


def json_time(field: str = "time") -> Callable[[bytes], float | None]:
    """The event time of a JSON line: its ``field`` as epoch seconds (None when the line has no such number)."""

    def time_of(line: bytes) -> float | None:
        try:
            value = json.loads(line)[field]
        except (ValueError, KeyError, TypeError):
            return None
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    return time_of


class _FollowRestrictions(RestrictionProvider):
    def initial_restriction(self, element):
        return OffsetRange(0, _UNBOUNDED)

    def create_tracker(self, restriction):
        return OffsetRestrictionTracker(restriction)

    def restriction_size(self, element, restriction):
        return 1  # unknown: the file grows

    def split(self, element, restriction):
        yield restriction  # one reader per file: lines stay in order

    def truncate(self, element, restriction):
        return None  # a drained job reads nothing more


_RESTRICTION = beam.DoFn.RestrictionParam(_FollowRestrictions())
_WATERMARK = beam.DoFn.WatermarkEstimatorParam(ManualWatermarkEstimator.default_provider())


#: Seconds one call reads before it hands the rest back to the runner (see :class:`FollowFileFn`).
MAX_SECONDS_PER_READ = 1.0

_monotonic = time.monotonic  # the read budget's clock (tests replace it)
_pause = time.sleep  # waits out a poll the runner brought back early (``idle_wait``; tests replace it)
_poll_clock = time.monotonic  # when a poll was asked for and brought back (``idle_wait``; tests replace it)


class FollowFileFn(beam.DoFn):
    """Reads one file from the restriction's start offset, line by line, then polls for appended lines.

    One call reads for at most ``max_seconds``, then defers the rest to an immediate resumption. A runner
    learns the source's watermark, and can take a checkpoint, only when a call returns: a call that read
    for as long as lines were there never returned while the file grew faster than it was read (or while
    it read a large backlog), so on Flink no later stage's watermark moved and no checkpoint completed until
    the writer paused (measured: 40,000 lines a second for 30 s, every one-second window came out after the
    writer stopped, 38 s late in the median; stop 52). The budget is a time, not a count of lines: on Flink
    with checkpoints a resumption waits for the runner's bundle to end (about a second), so a count would
    cap the read rate at that count a second (1,000 lines: 1,000 lines a second, measured). Like the
    moment a call finds the end of the file, it decides only when the watermark is reported, never a
    record's time or stamp: lateness downstream is the watermark's rule (``docs/pipelines.md``).

    ``idle_wait`` (the DirectRunner, :class:`ReadFollowing`): the FnApiRunner resumes a deferred read at once,
    whatever delay it asked for, so a file with nothing new was read again some 200 times a second (half a core
    while idle, measured stop 55); a call that comes back sooner than ``poll_seconds`` after a read that found
    nothing new first waits out the rest of it. Pacing only: what is read, and when the watermark moves, is
    unchanged. Off on the other runners, which honour the delay (Flink: ``poll_seconds`` above).
    """

    def __init__(
        self,
        time_of: Callable[[bytes], float | None],
        poll_seconds: float,
        max_disorder_seconds: float,
        max_seconds: float = MAX_SECONDS_PER_READ,
        idle_wait: bool = False,
    ):
        if not max_seconds > 0:
            raise ValueError(f"max_seconds must be positive, got {max_seconds}")
        self.time_of = time_of
        self.poll_seconds = poll_seconds
        self.max_disorder = max_disorder_seconds
        self.max_seconds = max_seconds
        self.idle_wait = idle_wait
        self._polled: dict = {}  # path -> when a read of it last found nothing new (``idle_wait``)

    def _wait_out_the_poll(self, path) -> None:
        since = self._polled.pop(path, None)
        if since is not None:
            left = self.poll_seconds - (_poll_clock() - since)
            if left > 0:
                _pause(left)

    @beam.DoFn.unbounded_per_element()
    def process(
        self,
        path,
        tracker=_RESTRICTION,
        watermark=_WATERMARK,
    ):
        if self.idle_wait:
            self._wait_out_the_poll(path)
        position = tracker.current_restriction().start
        with open(path, "rb") as f:
            f.seek(position)
            deadline = _monotonic() + self.max_seconds
            while True:
                if _monotonic() >= deadline:  # the budget is spent: resume at once, after the runner's turn
                    tracker.defer_remainder(Duration.of(0))
                    return
                line = f.readline()
                if not line.endswith(b"\n"):  # nothing more yet (or a line still being written)
                    break
                # claim the line's last byte: a deferred remainder then starts at the next line
                if not tracker.try_claim(position + len(line) - 1):
                    return
                position += len(line)
                body = line.rstrip(b"\r\n")
                if body == END_MARKER:
                    tracker.try_claim(tracker.current_restriction().stop - 1)  # the rest: finished
                    return
                if not body.strip():
                    continue
                t = self.time_of(body)
                current = watermark.current_watermark()
                if t is None:  # not a record: a dead letter downstream, at the current watermark
                    stamp = current if current is not None else Timestamp(0)
                else:
                    stamp = Timestamp.of(t)
                    # never past the wall clock: a line dated in the future (one person's) would otherwise make
                    # every later line of everyone else late (moved to a later tick, or dead-lettered)
                    held = Timestamp.of(min(t - self.max_disorder, time.time()))
                    if current is None or held > current:
                        watermark.set_watermark(held)
                yield beam.window.TimestampedValue(body, stamp)
        if self.idle_wait:
            self._polled[path] = _poll_clock()
        tracker.defer_remainder(Duration.of(self.poll_seconds))


class ReadFollowing(beam.PTransform):
    """The lines of the files matching ``pattern`` as they are written, as bytes stamped with their event time.

    Args:
        pattern: a path or glob, matched when the pipeline is built.
        time_of: a line's event time (default: its JSON ``time`` field).
        poll_seconds: how often a file with nothing new is read again. Beam 2.62's portable Flink runner
            truncates the requested delay to whole seconds, after the SDK has taken off the time since the
            read asked for it, so on Flink a poll under 2 s means "after the runner's bundle": one read a
            second with the default bundle time, 14 with ``--max_bundle_time_mills=50`` (measured, stop 53:
            about 4% of a core; poll 2.5 s: one read every 2 s). ``docs/flink.md``, "One upstream fix".
        max_disorder_seconds: how far behind the newest event time a later line may be and still be on time
            (the watermark is held back by this much).
        max_seconds_per_read: how long one read goes on before the runner hears the watermark (and may
            checkpoint): a file that grows faster than it is read still moves the pipeline's watermark.
    """

    def __init__(
        self,
        pattern: str,
        time_of: Callable[[bytes], float | None] | None = None,
        poll_seconds: float = 0.5,
        max_disorder_seconds: float = 0.0,
        max_seconds_per_read: float = MAX_SECONDS_PER_READ,
    ):
        super().__init__()
        self.pattern = pattern
        self.time_of = time_of or json_time()
        self.poll_seconds = poll_seconds
        self.max_disorder_seconds = max_disorder_seconds
        self.max_seconds_per_read = max_seconds_per_read

    def expand(self, pbegin):
        paths = sorted(glob.glob(self.pattern)) or [self.pattern]
        local = not holds_timer_watermarks(pbegin.pipeline)  # the DirectRunner
        fn = FollowFileFn(
            self.time_of, self.poll_seconds, self.max_disorder_seconds, self.max_seconds_per_read, idle_wait=local
        )
        lines = pbegin | "Files" >> beam.Create(paths) | "Follow" >> beam.ParDo(fn).with_output_types(bytes)
        if not local:
            return lines
        # The DirectRunner (its FnApiRunner, which runs a followed file: no TestStream or Pub/Sub in the graph)
        # fuses this read with the stateful steps after it, and that stage's input watermark is the end of time
        # from the start (its only input, the Create, is done): the timers one read sets fire at the start of the
        # next read's bundle, before its lines, whatever their time. An entry's update in the same tick as the
        # update before it, read one read later, was judged late (stop 55: one record of the demo's 6,912 on a
        # slow run, and every time a read ends between two such updates). A shuffle here ends the stage: the
        # steps after it get every line before any of their timers fires. It costs no latency on that runner
        # (it runs nothing after a splittable read until the read has ended) and holds the lines until then.
        return lines | "FusionBreak" >> beam.Reshuffle()


def _local_path(value) -> str:
    path = text(value, "a path or glob of JSON-lines files")
    if "://" in path:
        raise issue("a followed source reads local files (or a shared mount); got a URL")
    return path


class FollowSource(Source):
    """``{type: follow, path, max_disorder_seconds, max_dead_letter_fraction}``: JSON lines appended to local
    files, followed (:class:`ReadFollowing`): unbounded, and the one streaming source that runs on Flink from
    Python (``docs/flink.md``)."""

    EXAMPLE: ClassVar[str] = "{type: follow, path: updates/*.jsonl}"

    type: Literal["follow"]
    path: Annotated[str, BeforeValidator(_local_path)]
    format: Annotated[Literal["jsonl"], BeforeValidator(lambda v: choice(v, ("jsonl",)))] = "jsonl"
    max_disorder_seconds: Annotated[float, BeforeValidator(span)] = 0.0
    max_dead_letter_fraction: Fraction = 1.0

    @field_validator("path")
    @classmethod
    def _relative(cls, path: str, info: ValidationInfo) -> str:
        from pathlib import Path

        base_dir = (info.context or {}).get("base_dir")
        return str(Path(base_dir) / path) if base_dir is not None and not Path(path).is_absolute() else path

    def check_config(self, cfg) -> None:
        self.require_origin(cfg, PUBLIC_SCHEDULE)

    def check_runner(self, runner: str) -> None:
        if "DirectRunner" in runner:  # said, not refused: a file that ends is released exactly (docs/pipelines.md)
            print(
                "note: on the DirectRunner a followed file is released when every file is finished (#END): that "
                "runner runs nothing after a splittable read until the read ends; Flink releases as lines come "
                '(docs/pipelines.md, "Followed files")',
                file=sys.stderr,
            )

    def check_launch(self, cfg, local: bool, required: tuple | None = None) -> None:
        for path in source_files(self.path):  # a followed file must exist when the pipeline is built
            check_source_file(path, self.format, ())
        if cfg.end is None:  # #END then ends the input, not the release: it ends at the wall clock (docs/flink.md)
            periods = max(0, int((time.time() - cfg.origin) // cfg.tick_seconds))
            print(
                "WARNING: a followed source without time.end: when every file is finished (#END) the release "
                f"ends at the last period over by the wall clock then ({periods:,} periods after time.origin "
                "now), not at the data's last time; set time.end to end a replay where it should.",
                file=sys.stderr,
            )

    def read(self, p, cfg) -> Elements:
        # JSON lines as they are appended (a splittable DoFn: every portable runner, Flink included, runs it);
        # the watermark follows the lines' event times, held back by max_disorder_seconds; a line "#END"
        # finishes a file
        return Elements(
            p
            | "FollowFiles"
            >> ReadFollowing(
                self.path, time_of=json_time(cfg.time_field), max_disorder_seconds=self.max_disorder_seconds
            )
        )
