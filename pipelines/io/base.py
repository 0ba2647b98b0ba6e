"""What every source and sink type provides, and the steps several of them share.

A source or sink type is one module of ``pipelines.io``: its configuration model (a :class:`Source` or
:class:`Sink`, the keys of its YAML mapping), the checks that need the rest of the configuration
(:meth:`Source.check_config`), the checks only a launch can make (files readable, folders writable, services
reachable: :meth:`Source.check_launch`), and the Beam steps that read or write it. The pipelines look a type up
in the registry (``pipelines.io``) and call these methods; nothing outside ``pipelines.io`` branches on a type.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, NamedTuple

import apache_beam as beam
from apache_beam.coders import BooleanCoder
from apache_beam.metrics import Metrics
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.utils.timestamp import Duration
from pydantic import BeforeValidator

import transforms.state_cache  # noqa: F401  (user state: the SDK's cache without its scan of every module)
from pipelines.model import Section, in_range, issue, number
from transforms.spec import NAMESPACE

__all__ = ["Source", "Sink", "Elements", "Fraction", "DeduplicateFn", "OUTPUTS"]

#: A share of the input records: ``source.max_dead_letter_fraction`` (a bounded run that dead-letters more
#: fails, exit 3).
Fraction = Annotated[
    float, BeforeValidator(lambda v: in_range(number(v, nonneg=True), 0.0, 1.0, "the share of input records"))
]

#: The outputs a sink takes: name -> (the Avro schema of its records, the sink key of its topic).
OUTPUTS = {
    "releases": ("release", "topic"),
    "nodes": ("node", "nodes_topic"),
    "dead_letters": ("dead_letter", "dead_letter_topic"),
    "query_answers": ("query_answer", "answers_topic"),
}


class Elements(NamedTuple):
    """What a source read: the elements (bytes of a line or a message, an Avro record as a dict, or a
    :class:`~pipelines.parse.PubsubElement`) and how to parse them."""

    pcoll: object
    csv_header: tuple | None = None
    timestamp_attribute: str | None = None  # the event time is this Pub/Sub attribute
    max_future_seconds: float | None = None  # an event time further past the publish time is a dead letter
    # each element is a list of such elements (``Source.read_chunks``: lines in chunks)
    chunked: bool = False
    # ``(pattern, skip_header_lines)`` of the text files the lines come from, when they do (a second read for the
    # dead letters reads them again: ``pipelines.io.lines.ReadLineChunks``)
    lines_of: tuple | None = None


class Source(Section):
    """A source of records (updates, or the clients' reports of a local-DP collector)."""

    type: str

    STREAMING: ClassVar[bool] = True  # unbounded: the run is a streaming one
    DEDUPLICATES: ClassVar[bool] = False  # drops repeated deliveries (counted: ``duplicates_dropped``)

    @property
    def dead_letter_format(self) -> str:
        """The ``format`` of its dead letters (what the record as received is)."""
        return "jsonl"

    @property
    def dedup_field(self) -> str | None:
        """The record field that names an update (repeats dropped after parsing), if any."""
        return None

    def check_config(self, cfg) -> None:
        """What depends on the rest of the configuration ``cfg`` (a check of the whole configuration: its
        messages name the full key path)."""

    def check_launch(self, cfg, local: bool, required: tuple | None = None) -> None:
        """What only the launch can check (raises ConfigError). ``required``: the fields every record must
        have (None: an update's time field, op and id)."""

    def check_runner(self, runner: str) -> None:
        """Whether ``runner`` can run this source (raises ConfigError)."""

    def read(self, p, cfg) -> Elements:
        raise NotImplementedError

    def read_chunks(self, p, cfg) -> Elements:
        """What :meth:`read` reads, for a step that can take its elements in lists (``Elements.chunked``): a
        source of lines may give them so (fewer elements through Beam); by default :meth:`read`'s elements."""
        return self.read(p, cfg)

    def fingerprint(self) -> str | None:
        """A digest of the input (a bounded source; recorded in the confidential manifest)."""
        return None

    def replay_header(self) -> tuple | None:
        """The header line a file of replayed records needs (a CSV source's), else None."""
        return None

    def time_range(self, time_field: str) -> tuple[float, float] | None:
        """The first and last event times of a local bounded input (a hint for the operator), if known."""
        return None

    def require_origin(self, cfg, why: str) -> None:
        """A streaming source: the release schedule starts at the configured ``time.origin``, and event times
        are epoch seconds."""
        if cfg.time.origin is None:
            raise issue(
                f"required with a {self.type} source: the event time at which tick 1 starts (epoch seconds or an "
                f"ISO-8601 date-time such as 2026-11-22T00:00:00Z{why}",
                "time.origin",
            )
        if cfg.time.ticks:
            raise issue(f"must be false with a {self.type} source (event times are epoch seconds)", "time.ticks")


#: the end of the message of :meth:`Source.require_origin` for most streaming sources
PUBLIC_SCHEDULE = "); the release schedule is public configuration, never derived from the data"


class Sink(Section):
    """Where the outputs go: the releases, node outputs, query answers and dead letters."""

    NONE_IS_EMPTY: ClassVar[bool] = False

    type: str

    def takes(self, output: str) -> bool:
        """Whether this sink takes ``output`` (a key of :data:`OUTPUTS`): a topic sink takes the outputs whose
        topic it names."""
        return getattr(self, OUTPUTS[output][1], None) is not None

    @property
    def takes_dead_letters(self) -> bool:
        return self.takes("dead_letters")

    @property
    def manifest_folder(self) -> str | None:
        """The confidential folder that gets the release manifest, if any."""
        return None

    @property
    def picture_folder(self) -> str | None:
        """A local folder of JSON-lines releases to draw (``pipelines.plot``), if any."""
        return None

    @property
    def output_folders(self) -> dict[str, str]:
        """The local folders this sink writes (sink key -> folder): a folder that already holds another release's
        outputs is refused before the run (``pipelines.manifest.check_folders``)."""
        return {}

    @property
    def publishes_atomically(self) -> bool:
        """Whether a bounded run's outputs to this sink appear only when the run completes (:meth:`staged` moves
        them in): a failed or cancelled run then published nothing here."""
        return False

    def staged(self, tag: str) -> tuple[Sink, list[tuple[str, str]]]:
        """This sink writing to hidden staging folders instead (a bounded run publishes its outputs when it
        completes: ``pipelines.io.staging``), and the (staging folder, folder) pairs; a sink without local folders
        is itself, with none."""
        return self, []

    def check_config(self, cfg, index: int) -> None:
        """What depends on the rest of the configuration (messages name the full key path)."""

    def check_launch(self, cfg, index: int, local: bool) -> None:
        """What only the launch can check (raises ConfigError)."""

    def check_runner(self, runner: str, index: int) -> None:
        """Whether ``runner`` can run this sink (raises ConfigError)."""

    def write(self, records, output: str, *, label: str, streaming: bool, schema: str | None) -> str:
        """Write ``records`` (dicts) of ``output`` (a key of :data:`OUTPUTS` that this sink :meth:`takes`);
        returns where they go. ``schema``: the Avro schema's name (None: JSON lines only)."""
        raise NotImplementedError


class DeduplicateFn(beam.DoFn):
    """Drops repeated deliveries of one update (Pub/Sub delivers at least once; a Kafka reader may deliver a
    record twice).

    Keyed by the update id (see the source); an id is remembered for ``seconds`` after the element's timestamp
    (a message's publish time, a Kafka record's timestamp: the event time is read later, by the parse step)."""

    SEEN = ReadModifyWriteStateSpec("seen", BooleanCoder())
    EXPIRE = TimerSpec("expire", TimeDomain.WATERMARK)

    def __init__(self, seconds: float):
        self.seconds = seconds

    def process(
        self,
        element,
        ts=beam.DoFn.TimestampParam,
        seen=beam.DoFn.StateParam(SEEN),
        expire=beam.DoFn.TimerParam(EXPIRE),
    ):
        _, data = element
        if seen.read():
            Metrics.counter(NAMESPACE, "duplicates_dropped").inc()
            return
        seen.write(True)
        expire.set(ts + Duration(seconds=self.seconds))
        yield data

    @on_timer(EXPIRE)
    def on_expire(self, seen=beam.DoFn.StateParam(SEEN)):
        seen.clear()
