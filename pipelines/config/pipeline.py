"""The whole configuration: :class:`PipelineConfig`, the sections together, the checks that span sections, and
what the pipeline derives from them (the core's ``DynamicConfig``, the privacy unit, the release digest)."""

from __future__ import annotations

import functools
import inspect
from typing import Annotated, ClassVar

from pydantic import BeforeValidator, Field, field_validator, model_validator

from pipelines.config.kinds import MechanismConfig
from pipelines.config.open_keys import check_open_keys_config, open_keys_digest
from pipelines.config.queries import QueryConfig
from pipelines.config.sections import (
    EPSILON_RANGE,
    RHO_RANGE,
    PrivacyConfig,
    ReleaseConfig,
    StreamsConfig,
    TimeConfig,
)
from pipelines.io import QueriesSourceConfig, SinkConfig, SourceConfig
from pipelines.model import Section, issue
from transforms.core import mechanisms as registry
from transforms.core.config import DynamicConfig
from transforms.core.continual.consistency import Consistency
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PrivacyUnit, PureDP, stream_share
from transforms.core.foundation.noise import config_digest
from transforms.spec import StreamSpec

__all__ = ["PipelineConfig", "SECTIONS", "DEFAULT_SINKS"]

SECTIONS = ("privacy", "time", "streams", "mechanism", "release", "queries", "source", "sinks", "queries_source")
DEFAULT_SINKS = [{"type": "file", "path": "output/", "format": "jsonl"}]


def _queries(value):
    if not isinstance(value, list) or not value:
        raise issue("must be a non-empty list")
    return value


def _sinks(value):
    if not isinstance(value, list) or not value:
        raise issue(f"must be a non-empty list such as [{{type: file, path: output/}}] (or omit it); got {value!r}")
    return value


class _Repr(str):
    """A text whose ``repr`` is itself (a legacy repr handed to ``config_digest``)."""

    def __repr__(self) -> str:
        return str(self)


class PipelineConfig(Section):
    """A validated pipeline configuration (``parse_config`` builds it from YAML; ``docs/pipelines.md`` lists
    the keys). The sections are ``privacy``, ``time``, ``streams`` (field ``streams_config``), ``mechanism``
    (field ``mechanism_config``), ``release``, ``queries``, ``source``, ``sinks`` and ``queries_source``; the
    properties below are what the pipeline reads."""

    EXAMPLE: ClassVar[str] = "{privacy: ..., queries: [...], source: ...}"
    NONE_IS_EMPTY: ClassVar[bool] = False

    privacy: PrivacyConfig
    time: TimeConfig
    streams_config: StreamsConfig = Field(alias="streams")
    mechanism_config: MechanismConfig = Field(alias="mechanism")
    release: ReleaseConfig
    queries: Annotated[tuple[QueryConfig, ...], BeforeValidator(_queries)]
    source: SourceConfig
    sinks: Annotated[tuple[SinkConfig, ...], BeforeValidator(_sinks)]
    queries_source: QueriesSourceConfig | None = None

    @classmethod
    def check_raw(cls, data: dict) -> dict:
        data = {"sinks": DEFAULT_SINKS, "queries": None, **data}
        return {**{k: None for k in SECTIONS if k != "queries_source"}, **data}

    @field_validator("queries")
    @classmethod
    def _unique_names(cls, queries):
        if len({q.name for q in queries}) != len(queries):
            raise issue("names must be unique")
        return queries

    @model_validator(mode="after")
    def _across_sections(self):
        if self.profile == "paper" and self.rho is not None:
            raise issue("paper uses Laplace noise; give privacy.epsilon, or use profile tuned", "mechanism.profile")
        self._check_person_field()
        check_open_keys_config(self)
        self._check_max_streams()
        if self.max_entries_window is not None and self.end is None:
            raise issue(
                "needs time.end: a person brings max_entries_per_person entries per window, and the guarantee "
                "counts the windows of the release",
                "privacy.max_entries_window",
            )
        self.source.check_config(self)
        for i, sink in enumerate(self.sinks):
            sink.check_config(self, i)
        if self.queries_source is not None:
            if self.mechanism != "pmwg":
                raise issue(
                    f"streamed queries are answered by mechanism.kind pmwg; got {self.mechanism}", "queries_source"
                )
            if self.queries[0].type != "histogram":
                raise issue(
                    "the first query must be a histogram: streamed queries are weights over its domain",
                    "queries_source",
                )
        if not any(sink.takes_dead_letters for sink in self.sinks):
            raise issue(
                "no sink takes the dead letters, which would be lost: add a file sink or set dead_letter_topic on "
                "a pubsub sink",
                "sinks",
            )
        if self.consistent:
            # histograms consistent with the count (transforms.core.continual.consistency): cells >= 0 summing
            # to the released count, so it implies clamping
            if not self.clamp:
                raise issue(
                    "a consistent histogram has cells >= 0 summing to the count clamped at 0; remove "
                    "release.clamp: false (or release.consistent)",
                    "release.consistent",
                )
            n_counts = sum(q.type == "count" for q in self.queries)
            n_histograms = sum(q.type == "histogram" for q in self.queries)
            if n_counts != 1 or not n_histograms:
                raise issue(
                    "makes each histogram query consistent with THE count query of the release; the queries have "
                    f"{n_counts} count and {n_histograms} histogram queries (need exactly 1 count and at least 1 "
                    "histogram)",
                    "release.consistent",
                )
        return self

    def _check_max_streams(self) -> None:
        """``privacy.max_streams_per_person``: at most the number of declared streams (a person cannot reach
        more), not with open keys (their ``max_keys_per_person`` bounds a person's keys), and each stream's share
        of the budget inside the range the mechanisms are tested with."""
        n = self.privacy.max_streams_per_person
        several = len(self.streams) > 1 and not self.open_keys
        if n is None and self.unit == "person" and several:
            # who is protected must be said, not implied: a person may book in every region
            raise issue(
                f"required when privacy.unit is person and {len(self.streams)} streams are declared: the streams "
                f"one person's updates may reach, 1 to {len(self.streams)} (the budget then protects a person across "
                "the whole release: each stream runs at its share and a person's updates in further streams are "
                "dead letters contribution_bounded), or per_stream (each stream's budget protects a person's part "
                f"in it: a person in {len(self.streams)} streams is protected by {len(self.streams)} times the "
                "budget)",
                "privacy.max_streams_per_person",
            )
        if n is None:
            return
        if self.open_keys:
            raise issue(
                f"an open-key release bounds a person with {self.open_person_bound}; remove max_streams_per_person",
                "privacy.max_streams_per_person",
            )
        if n == "per_stream":
            return
        if n > len(self.streams):
            raise issue(
                f"is {n}, more than the {len(self.streams)} declared stream{'s' if len(self.streams) != 1 else ''} "
                f"(streams.keys); set it to at most {len(self.streams)}",
                "privacy.max_streams_per_person",
            )
        low = RHO_RANGE[0] if self.rho is not None else EPSILON_RANGE[0]
        value = self.rho if self.rho is not None else self.epsilon
        if value / n < low:
            raise issue(
                f"gives each stream {value / n:g} of the budget, below the {low:g} the mechanisms are tested with; "
                "raise the budget or lower max_streams_per_person",
                "privacy.max_streams_per_person",
            )

    def _check_person_field(self) -> None:
        """The person field is a field of its own: never the time or stream field, never a field a query
        reads (the privacy id is never released)."""
        field = self.person_field
        if field is None:
            return
        for other, key in ((self.time_field, "time.field"), (self.stream_field, "streams.field")):
            if field == other:
                raise issue(
                    f"must differ from {key} ({other!r}): the person is a field of its own", "privacy.person_field"
                )
        for i, q in enumerate(self.queries):
            if getattr(q, "field", None) == field:
                raise issue(
                    f"queries[{i}] ({q.name}) reads the same field {field!r}: the privacy id is never released; "
                    "choose another query field",
                    "privacy.person_field",
                )

    # -- the sections' values, as the pipeline reads them -------------------------------------------------

    epsilon = property(lambda self: self.privacy.epsilon)
    delta = property(lambda self: self.privacy.delta)
    rho = property(lambda self: self.privacy.rho)
    unit = property(lambda self: self.privacy.unit)
    max_mutations_per_entry = property(lambda self: self.privacy.max_mutations_per_entry)
    mutation_window = property(lambda self: self.privacy.mutation_window)  # seconds after the first insertion
    person_field = property(lambda self: self.privacy.person_field)  # the privacy id's field (unit person)
    max_entries_per_person = property(lambda self: self.privacy.max_entries_per_person)
    max_entries_window = property(lambda self: self.privacy.max_entries_window)  # seconds, from time.origin
    # the streams a person may reach (unit person), None when not bounded: per_stream, or not written
    max_streams_per_person = property(
        lambda self: (lambda n: None if n == "per_stream" else n)(self.privacy.max_streams_per_person)
    )
    disable_noise = property(lambda self: self.privacy.disable_noise)
    noise_key = property(lambda self: self.privacy.noise_key)  # (kind, value): env / file / secret
    release_id = property(lambda self: self.privacy.release_id)  # None: a new release at every launch
    time_field = property(lambda self: self.time.field)
    tick_seconds = property(lambda self: self.time.tick_seconds)
    ticks = property(lambda self: self.time.ticks)
    allowed_lateness = property(lambda self: self.time.allowed_lateness)
    late_policy = property(lambda self: self.time.late_policy)
    origin = property(lambda self: self.time.start)
    end = property(lambda self: self.time.end)  # the release's public end (event time, exclusive)
    stream_field = property(lambda self: self.streams_config.field)
    stream_keys = property(lambda self: self.streams_config.keys)
    registry_shards = property(lambda self: self.streams_config.registry_shards)  # streaming, not DirectRunner
    # streams: {keys: open}, or a histogram's domain: open (issue 33): the open-key release (pipelines/open_keys.py)
    open_keys = property(lambda self: self.streams_config.open_keys or any(q.open_domain for q in self.queries))

    @property
    def open_person_bound(self) -> str | None:
        """The key that bounds a person across an open-key release (open stream keys: a person's keys; an open
        histogram: a person's (stream, cell) pairs over all streams); None without open keys."""
        if not self.open_keys:
            return None
        return "streams.max_keys_per_person" if self.streams_config.open_keys else "queries[].max_cells_per_person"

    mechanism = property(lambda self: self.mechanism_config.kind)
    profile = property(lambda self: self.mechanism_config.profile)
    beta = property(lambda self: self.mechanism_config.beta)
    options = property(lambda self: self.mechanism_config.options)  # sorted (key, value) pairs, as written
    every_ticks = property(lambda self: self.release.every_ticks)
    clamp = property(lambda self: self.release.clamp)
    round_answers = property(lambda self: self.release.round)
    consistent = property(lambda self: self.release.consistent)

    @property
    def streaming(self) -> bool:
        queries_streaming = self.queries_source is not None and self.queries_source.STREAMING
        return self.source.STREAMING or queries_streaming

    @property
    def streams(self) -> tuple:
        return self.stream_keys if self.stream_field else ("default",)

    # -- the source's settings by their former flat names (tools and tests read them) ----------------------

    source_type = property(lambda self: self.source.type)
    source_path = property(lambda self: getattr(self.source, "path", None))
    source_format = property(lambda self: self.source.format)
    subscription = property(lambda self: getattr(self.source, "subscription", None))
    timestamp_attribute = property(lambda self: getattr(self.source, "timestamp_attribute", None))
    id_attribute = property(lambda self: getattr(self.source, "id_attribute", None))
    dedup_seconds = property(lambda self: getattr(self.source, "dedup_seconds", 600.0))
    dedup_field = property(lambda self: self.source.dedup_field)
    max_dead_letter_fraction = property(lambda self: self.source.max_dead_letter_fraction)
    max_future_seconds = property(lambda self: getattr(self.source, "max_future_seconds", None))
    max_disorder_seconds = property(lambda self: getattr(self.source, "max_disorder_seconds", 0.0))
    kafka_bootstrap_servers = property(lambda self: getattr(self.source, "bootstrap_servers", None))
    kafka_topic = property(lambda self: getattr(self.source, "topic", None))
    kafka_expansion_service = property(lambda self: getattr(self.source, "expansion_service", None))
    kafka_consumer_config = property(lambda self: getattr(self.source, "consumer_config", ()))
    kafka_max_records = property(lambda self: getattr(self.source, "max_records", None))

    # -- what the pipeline derives ------------------------------------------------------------------------

    @property
    def max_insertions_per_entry(self) -> int | None:
        """``privacy.max_insertions_per_entry``: how many times one entry id may be inserted (entry and person
        units); None when not configured (the unit's default, ``PrivacyUnit.insertion_limit``: once under a
        mutation limit) and under the update unit, which has no entries."""
        return None if self.unit == "update" else self.privacy.max_insertions_per_entry

    @property
    def privacy_unit(self) -> PrivacyUnit:
        """The configured neighbouring relation (``PrivacyUnit``): the limits in ticks through ``StreamSpec``."""
        if self.unit == "person":
            inserted = (
                {} if self.max_insertions_per_entry is None else {"max_insertions": self.max_insertions_per_entry}
            )
            return PrivacyUnit.person(
                self.max_entries_per_person,
                self.max_mutations_per_entry,
                per_window=self.max_entries_window_ticks,
                mutation_window=self.mutation_window_ticks,
                max_streams=self.max_streams_per_person,
                **inserted,
            )
        if self.unit == "entry":
            return PrivacyUnit.entry(
                self.max_mutations_per_entry, self.mutation_window_ticks, max_insertions=self.max_insertions_per_entry
            )
        return PrivacyUnit(self.unit, self.max_mutations_per_entry, self.mutation_window_ticks)

    @property
    def group_unit(self) -> PrivacyUnit:
        """The unit that turns the core ledger's spend into the configured
        guarantee (group privacy): the configured unit, or the update unit
        (the identity) for mechanisms whose ledger already charges the
        configured guarantee (``ledger_unit = "configured"``: the changelog
        releases, which account by the enforced constraint)."""
        return self.mechanism_spec.group_unit(self.dynamic_config())

    def ledger_budget(self):
        """The core ledger's total, in its currency (update level, or the
        configured guarantee for the changelog releases)."""
        return self.mechanism_spec.ledger_budget(self.dynamic_config())

    @property
    def end_tick(self) -> int | None:
        """The release's last tick (``StreamSpec.end_tick``: public, from ``time.end``), None without an end."""
        return StreamSpec(tick_seconds=self.tick_seconds, origin=self.origin, end_time=self.end).end_tick

    def unit_text(self) -> str:
        """The privacy unit in words (the summary's budget line, manifests; ``pipelines.outputs.unit_statement``
        says whom it protects)."""
        if self.unit == "update":
            return "update"
        if self.unit == "person":
            streams = self.max_streams_per_person
            return (
                f"person, at most {self.max_entries_per_person} entries of at most "
                f"{self.max_mutations_per_entry} mutations"
                + ("" if streams is None else f", in at most {streams} stream{'s' if streams != 1 else ''}")
            )
        parts = []
        if self.max_mutations_per_entry is not None:
            parts.append(f"at most {self.max_mutations_per_entry} mutations")
        if self.mutation_window is not None:
            w = self.mutation_window
            when = f"{w / 86400:g} days" if w >= 86400 else f"{w:g} s"
            parts.append(f"all within {when} of the first insertion")
        return "entry, " + " and ".join(parts)

    @property
    def mutation_window_ticks(self) -> int | None:
        """``privacy.mutation_window`` in ticks, rounded up: a mutation is accepted
        at most this many ticks after the tick of its entry's first insertion (the
        guarantee is computed for this enforced window)."""
        if self.mutation_window is None:
            return None
        return StreamSpec(tick_seconds=self.tick_seconds, origin=self.origin).ticks_in(self.mutation_window)

    @property
    def max_entries_window_ticks(self) -> int | None:
        """``privacy.max_entries_window`` in ticks, rounded up (``PrivacyUnit``'s ``per_window``): tumbling
        windows from tick 1 (``time.origin``), at most ``max_entries_per_person`` entries admitted per window."""
        if self.max_entries_window is None:
            return None
        return StreamSpec(tick_seconds=self.tick_seconds, origin=self.origin).ticks_in(self.max_entries_window)

    def target_budget(self):
        """The configured budget: the guarantee of the release for its unit (what the ledger charges)."""
        if self.rho is not None:
            return ZCDP(self.rho)
        return ApproxDP(self.epsilon, self.delta) if self.delta > 0 else PureDP(self.epsilon)

    def stream_budget(self):
        """The budget each stream's core runs at: the configured one ``B``, or its share under
        ``n = max_streams_per_person`` (:attr:`_stream_budget`).

        Why: the streams are released independently, each at its own budget. Under the update and entry units
        a unit lies in one stream (parallel composition: the release's guarantee is the per-stream one). A
        person may have updates in several streams; the person step admits them in at most ``n`` streams
        (``bound_person_streams``), so a person's outputs are those of at most ``n`` streams, each private for
        that person at the stream's budget, and they compose sequentially. ``per_stream`` (or a single declared
        stream, or open keys, where the key is not written): a person in several streams is protected by each
        stream's budget for that stream's part (``docs/contribution.md``)."""
        return self._stream_budget

    @functools.cached_property
    def _stream_budget(self):
        """The share (:meth:`stream_budget`): ``stream_share`` of the configured budget over ``n`` streams, in the
        currency they compose in (``B / n``; under an (eps, delta) budget with Gaussian noise ``(eps_s, delta)``
        whose ledger holds ``rho(B) / n``), by the mechanism's own ledger (``ledger_budget``)."""
        n = self.max_streams_per_person if self.unit == "person" else None
        if n is None:
            return self.target_budget()
        cap = self.mechanism_spec.core_cls.ledger_cap
        if "options" in inspect.signature(cap).parameters:  # net_change's ledger follows its calibration option
            options = self.mechanism_options()
            return stream_share(self.target_budget(), n, lambda b: cap(self.core_config_at(b), options))
        return stream_share(self.target_budget(), n, lambda b: cap(self.core_config_at(b)))

    def core_config_at(self, budget) -> DynamicConfig:
        """The core configuration at ``budget`` (:meth:`dynamic_config` is it at :meth:`stream_budget`)."""
        return DynamicConfig(
            tuple(q.query_set() for q in self.queries),
            budget,
            profile=self.profile,
            beta=self.beta,
            unit=self.privacy_unit,
        )

    @property
    def mechanism_spec(self) -> registry.MechanismSpec:
        return registry.get(self.mechanism)

    def mechanism_options(self):
        """The mechanism's options dataclass (its registry entry's ``options_cls``)."""
        return self.mechanism_spec.options(**dict(self.options))

    def dynamic_config(self) -> DynamicConfig:
        """The core configuration: the configured target budget for the configured
        privacy unit (the core spends the update-level budget whose group
        guarantee is the target, and enforces the unit's mutation limit). Built
        once (the records' spend fields read it for every record)."""
        return self._core_config

    @functools.cached_property
    def _core_config(self) -> DynamicConfig:
        return self.core_config_at(self.stream_budget())

    def consistency(self):
        """The post-processing of ``release.consistent`` (None when off). Unset, the measured default
        (``docs/consistency.md`` "The default"): every histogram of an ``auto`` or ``net_change`` release with
        ``clamp`` on projected onto THE count (or its own total) and stated with ``B_h + |tau|``: post-processing
        of released values, free in privacy; ``true``: with THE count and the worst-case bound; ``false``: none."""
        if self.consistent is None:
            if not self.clamp or self.mechanism not in ("auto", "net_change"):
                return None
            return Consistency.default_for(self.dynamic_config(), self.round_answers) or None
        if not self.consistent:
            return None
        return Consistency.for_config(self.dynamic_config(), self.round_answers)

    def release_digest(self) -> str:
        """A digest of everything that defines the release (privacy, time, streams,
        mechanism, queries and their encodings), not of where data comes from or
        goes to: mixed into the release identity that keys the noise, and
        recorded in the release manifest. The queries enter by the repr they had
        as frozen dataclasses (:meth:`QueryConfig.legacy_repr`), so the digest of
        a YAML file never changes."""
        queries = _Repr(repr(tuple(_Repr(q.legacy_repr()) for q in self.queries)))
        return config_digest(
            "pipeline-config-v1",
            (self.epsilon, self.delta, self.rho, self.unit, self.max_mutations_per_entry, self.disable_noise)
            + (() if self.mutation_window is None else (("mutation_window", self.mutation_window),))
            + self._unit_digest_tail()
            + open_keys_digest(self),
            (self.time_field, self.tick_seconds, self.ticks, self.allowed_lateness, self.late_policy),
            (self.origin, self.end, self.every_ticks),
            (self.stream_field, self.stream_keys),
            (self.mechanism, self.profile, self.options, self.beta),
            queries,
        )

    def _unit_digest_tail(self) -> tuple:
        """The privacy keys added for issue 28 (and max_streams_per_person after it), each only when set, so that
        the digest of every configuration written before them is unchanged."""
        tail = []
        for key in (
            "max_insertions_per_entry",
            "person_field",
            "max_entries_per_person",
            "max_entries_window",
            "max_streams_per_person",
        ):
            if getattr(self, key) is not None:
                tail.append((key, getattr(self, key)))
        return tuple(tail)
