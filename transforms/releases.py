"""Beam composite PTransforms for continual release over dynamic data.

:class:`ReleaseContinually` runs any mechanism of the registry
(``transforms.core.MECHANISMS``) over every declared stream; the named
transforms (:class:`ReleaseFullyDynamic`, :class:`ReleaseInsertionOnly`,
:class:`ReleaseTwoStreamBaseline`, :class:`CountContinually`) are the same
transform with the mechanism fixed.

Steps (``docs/beam.md``): a stateless validation (``validate.ValidateFn``
with ``validate.UpdateCheck``); an entry registry keyed by (stream, entry id);
a per-tick merge; a per-stream release step (``per_stream``, with
``common.ReleaseStep``) that drives the mechanism through its contract
(``transforms.core.ContinualRelease``). Bounded input in a batch pipeline
takes ``bounded.py`` (GroupByKey registry, one call per stream, no state);
unbounded input, or any input under ``--streaming``, takes ``streaming.py``
(state and event-time timers, the mechanism in versioned state).

Privacy: per declared stream, the registered mechanism's guarantee
(``MechanismSpec.neighbours``, ``config.budget`` for ``config.unit``); streams
are disjoint parts of the updates, so each declared stream is an independent
release with its own budget (parallel composition). Every declared stream
releases on schedule with or without data, and the schedule (origin, end,
deadlines) is configuration, so the presence of data does not show in it. All
noise is keyed by the noise key and the transform's release identity, fixed at
construction (``docs/privacy.md``).
"""

from __future__ import annotations

import inspect
import typing

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import StandardOptions
from apache_beam.transforms import window

from transforms.bounded import ResolveEntriesBoundedFn
from transforms.coders import ReleaseRecordFields
from transforms.common import MAX_DIGEST_LENGTH, NODES, ReleaseStep, digest_length, join_raw, line_digest
from transforms.core import mechanisms
from transforms.core.config import DynamicConfig
from transforms.core.continual.consistency import Consistency
from transforms.core.foundation.noise import ReleaseIdentity, config_digest
from transforms.per_stream import BOUNDED_END, START, BoundedStreamFn
from transforms.person import ALL_STREAMS, PersonUpdateCheck, bound_persons, person_limit
from transforms.records import NoiseKey
from transforms.sharded import DEFAULT_SHARDS, KeyByShard, ResolveShardsFn, check_shards
from transforms.spec import NAMESPACE, StreamSpec
from transforms.streaming import (
    TICK_MERGES,
    GatedBoundPersonsFn,
    MergeTickFn,
    ResolveEntriesFn,
    counts_gate,
    per_stream_step,
    stateful_tick_merge,
    with_input_end,
)
from transforms.validate import UpdateCheck, ValidateFn

__all__ = [
    "ReleaseContinually",
    "ReleaseFullyDynamic",
    "ReleaseInsertionOnly",
    "ReleaseTwoStreamBaseline",
    "CountContinually",
    "StreamSpec",
]


_DEFAULT_SPEC = StreamSpec()  # one stream "default", 60 s ticks from 0, no end


class ReleaseContinually(beam.PTransform):
    """Continual release of every declared stream with a registered mechanism.

    Consumes a PCollection of :class:`~transforms.records.UpdateRecord`
    (element timestamps = event time); in a bounded (batch) run an element may also be a list of them, a chunk
    validated record by record (``pipelines.wiring`` reads a file so: one element through Beam per chunk; in a
    streaming run a list is ``malformed``, as any other shape). Returns a dict of PCollections:
    ``answers`` (:class:`~transforms.records.ReleaseRecord`, one per query per
    release, emitted when the watermark passes the end of the tick after the
    released tick, plus the allowed lateness), ``nodes``
    (:class:`~transforms.records.NodeRecord`, the released data structure, when
    the mechanism has one) and ``dead_letters``
    (:class:`~transforms.records.DeadLetter`, with a reason from
    ``transforms.core.foundation.entries.REASONS``; the payload is never logged).

    Args:
      mechanism: a registry name (``transforms.core.MECHANISMS``).
      config: the release's :class:`DynamicConfig` (queries, budget per
        stream, privacy unit, beta, profile).
      spec: streams, ticks, origin, end (required for bounded input), lateness.
      noise_key: where workers load the secret key (``NoiseKey``).
      options: the mechanism's options dataclass (its registry entry's
        ``options_cls``), or a dict of its fields; None for the defaults.
      emit_nodes: emit the released data structure on ``nodes``.
      release: the release identity to continue or reproduce; None for a new
        release (a random id). Fixed here, at construction.
      tick_merge: ``auto`` | ``stateful`` | ``bundle`` (streaming path; see
        ``transforms.streaming.stateful_tick_merge``; ``auto`` with a sharded registry: ``bundle``).
      registry_shards: the streaming entry registry's shards per stream on a runner that holds the release
        step's watermark for the registry's timers (Flink, Dataflow: ``transforms.sharded``; one key per
        ``(stream, shard)``, one timer per shard and pending tick); 0: one key per entry
        (``transforms.streaming.ResolveEntriesFn``, the layout of savepoints taken before shards existed). The
        DirectRunner always keys by entry (its gate). Changes no release and no noise: not part of the release's
        digest.
      consistency: a :class:`~transforms.core.continual.consistency.Consistency`: the
        histograms released consistent with the count (cells >= 0 summing to
        the count, post-processing with the bound ``docs/consistency.md``
        states); None: as released.
      raw_lines: for bounded input whose records carry as ``raw`` the text of a line of a source that can be
        read again (``pipelines.wiring``: a file source of lines): a callable ``(pipeline, needed) ->
        PCollection`` of the source's lines (bytes or text) read a second time, in chunks (each element a list
        of lines), where ``needed`` is a singleton side input, the number of lines the dead letters want: with
        0 the callable reads nothing (clean input costs no second read). The
        entry shuffle then carries a digest of each record as received instead of the record, and the
        registry's dead letters get their records back from that second read (the same dead letters:
        ``_join_raws``). Ignored for unbounded input and under the person unit (whose bounding step keys the
        updates by person before the registry, with their records).
    """

    mechanism_name: str | None = None  # fixed by the named subclasses

    def __init__(
        self,
        mechanism: str | None = None,
        config: DynamicConfig | None = None,
        spec: StreamSpec = _DEFAULT_SPEC,
        noise_key: NoiseKey | None = None,
        *,
        options=None,
        emit_nodes: bool = True,
        label: str | None = None,
        tick_merge: str = "auto",
        release: ReleaseIdentity | None = None,
        consistency: Consistency | None = None,
        raw_lines=None,
        registry_shards: int = DEFAULT_SHARDS,
    ):
        super().__init__(label)
        self.registry_shards = check_shards(registry_shards)
        self.raw_lines = raw_lines
        name = self.mechanism_name or mechanism
        self.mechanism = mechanisms.get(name)
        if getattr(self.mechanism, "input_kind", "updates") != "updates":
            raise ValueError(
                f"mechanism {name!r} consumes client reports, not updates: use "
                "transforms.local_dp.CollectRandomizedResponses (or the pipeline with its config)"
            )
        if isinstance(options, dict):
            options = self.mechanism.options(**options)
        if options is not None and not isinstance(options, self.mechanism.options_cls):
            raise TypeError(f"options of {name!r} must be a {self.mechanism.options_cls.__name__}")
        self.options = options if options is not None else self.mechanism.options_cls()
        if tick_merge not in TICK_MERGES:
            raise ValueError(f"tick_merge must be one of {', '.join(TICK_MERGES)}; got {tick_merge!r}")
        self.tick_merge = tick_merge
        if not isinstance(config, DynamicConfig):
            raise TypeError("config must be a transforms.core.DynamicConfig")
        if config.unit.kind not in self.mechanism.units:  # the registry entry's stated guarantees
            raise ValueError(
                f"privacy.unit: mechanism {name!r} states no guarantee for the {config.unit.kind} unit; "
                f"it serves {', '.join(self.mechanism.units)}"
            )
        # the person unit: contribution bounding in the pipeline (transforms.person), ahead of the registry
        self._person_limit = person_limit(config.unit) if config.unit.kind == "person" else None
        unsupported = sorted({q.kind for q in config.queries} - set(self.mechanism.query_kinds))
        if unsupported:
            raise ValueError(
                f"mechanism {name!r} does not answer {', '.join(unsupported)} queries; "
                f"it answers {', '.join(self.mechanism.query_kinds)}"
            )
        if not isinstance(spec, StreamSpec):
            raise TypeError("spec must be a StreamSpec")
        across = self._person_limit is not None and self._person_limit.max_streams is not None
        if across and ALL_STREAMS in spec.streams:  # the person step's key across streams is (ALL_STREAMS, person)
            raise ValueError(f"a stream named {ALL_STREAMS!r} cannot be told from the person step's key across streams")
        if noise_key is None:
            raise ValueError(
                "a noise key source is required: NoiseKey.from_env(...) or from_file(...) in production, "
                "NoiseKey.fixed(...) or NoiseKey.disabled() in tests"
            )
        if release is not None and not isinstance(release, ReleaseIdentity):
            raise TypeError("release must be a transforms.core.ReleaseIdentity (or None for a new release)")
        if consistency is not None:
            if not isinstance(consistency, Consistency):
                raise TypeError("consistency must be a transforms.core.continual.consistency.Consistency (or None)")
            names = {q.name: q.kind for q in config.queries}
            for h, c in consistency.pairs:
                if names.get(h) != "histogram" or names.get(c) != "count":
                    raise ValueError(f"consistency pair ({h!r}, {c!r}) must name a histogram and a count query")
            for h in consistency.own_total:
                if names.get(h) != "histogram":
                    raise ValueError(f"consistency own_total {h!r} must name a histogram query")
        self.consistency = consistency
        self.config = config
        self.spec = spec
        self.noise_key = noise_key
        self.emit_nodes = emit_nodes
        self._domains = tuple(q.mechanism(config.noise_kind).domain_size for q in config.queries)
        # The release identity keys all noise of this transform. It is fixed here, at
        # pipeline construction, so it travels in the graph: retried bundles (and a
        # restored or updated job given the same id) redraw the same noise, while any
        # other release on the same key draws independent noise. A new id is random
        # (os.urandom), never derived from data; the digest covers everything that
        # defines the release, so a reused id with another configuration differs too.
        base = release if release is not None else ReleaseIdentity.new()
        self.release = base.with_digest(config_digest("release-transform-v1", name, config, self.options, spec))

    @property
    def core_cls(self):
        return self.mechanism.core_cls

    def expand(self, updates):
        spec = self.spec
        streaming = updates.pipeline.options.view_as(StandardOptions).streaming
        bounded = updates.is_bounded and not streaming
        if bounded and spec.end_tick is None:
            raise ValueError(BOUNDED_END)
        # the records as received out of the entry shuffle: bounded, a source read twice, no person step
        digests = bounded and self.raw_lines is not None and self._person_limit is None
        validated = self._validate(updates, digests, chunks=bounded)
        admitted, person_dead = self._bound_persons(validated.valid, bounded)
        if bounded:
            answers, nodes, dead = self._expand_bounded(admitted, digests)
        else:
            answers, nodes, dead = self._expand_unbounded(admitted)
        dead = (validated[ValidateFn.DEAD], *person_dead, dead) | "DeadLetters" >> beam.Flatten()
        return {"answers": answers, "nodes": nodes, "dead_letters": dead}

    def _validate(self, updates, digests: bool = False, chunks: bool = False):
        """The validation step: outputs ``valid`` and ``ValidateFn.DEAD`` (under the person unit the check
        also requires the person id and keys the updates by ``(stream, person)``; ``digests``: the updates
        carry a digest of the record as received, ``UpdateCheck``; ``chunks``: a bounded run, where a list of
        records is a chunk of them, each validated as an element would be: no step after the validation reads an
        element's timestamp on the bounded path)."""
        if self._person_limit:
            across = self._person_limit.max_streams is not None  # one key per person, whatever the stream
            check = PersonUpdateCheck(self.spec, self._domains, across_streams=across)
        else:
            # bounded: the entry's key joined in one text (transforms.common.entry_key_prefixes)
            check = UpdateCheck(self.spec, self._domains, digests=digests, joined_keys=chunks)
        return updates | "Validate" >> beam.ParDo(ValidateFn(check, chunks)).with_outputs(ValidateFn.DEAD, main="valid")

    def _bound_persons(self, valid, bounded: bool):
        """Under the person unit, the person step (``transforms.person.bound_persons``): returns the updates
        for the registry and a tuple with the step's dead letters; otherwise ``(valid, ())``, the graph
        unchanged."""
        if self._person_limit is None:
            return valid, ()
        gated = not bounded and counts_gate(self.tick_merge, valid.pipeline)  # the DirectRunner's gate
        fn = GatedBoundPersonsFn(self.spec, self._person_limit) if gated else None  # counts, numbered updates
        admitted, dead = bound_persons(valid, self.spec, self._person_limit, bounded, fn)
        return admitted, (dead,)

    def _step(self, cls=ReleaseStep):
        """This release's per-stream step (a :class:`~transforms.common.ReleaseStep` class)."""
        return cls(
            self.spec,
            self.config,
            self.mechanism,
            self.noise_key,
            self.emit_nodes,
            options=self.options,
            release=self.release,
            consistency=self.consistency,
        )

    def _expand_bounded(self, valid, digests: bool = False):
        """All input is known: resolve each entry once, group per stream, and
        apply each stream's aggregates in one call (no state, no timers)."""
        spec = self.spec
        resolved = self._resolve_bounded(valid, digests)
        # one call per stream with data, after a GroupByKey; a declared stream without
        # data is released from a Create of the declared streams (the FnApiRunner gives
        # a multi-input Flatten a stage of its own, so the markers stay out of the data's way)
        seen = beam.pvalue.AsList(resolved[ResolveEntriesBoundedFn.STREAMS_SEEN])
        fn = BoundedStreamFn(self._step())
        # the answers typed ReleaseRecordFields: ReleaseRecords encoded by their fields, not pickled (transforms.coders)
        with_data = (
            resolved.resolved
            | "GroupByStream" >> beam.GroupByKey()
            | "ReleaseStream"
            >> beam.ParDo(fn, seen).with_output_types(ReleaseRecordFields).with_outputs(NODES, main="answers")
        )
        idle = (
            valid.pipeline
            | "DeclaredStreams" >> beam.Create(list(spec.streams), reshuffle=False)
            | "ReleaseIdleStreams"
            >> beam.ParDo(fn, seen).with_output_types(ReleaseRecordFields).with_outputs(NODES, main="answers")
        )
        answers = (with_data.answers, idle.answers) | "Answers" >> beam.Flatten()
        nodes = (with_data[NODES], idle[NODES]) | "Nodes" >> beam.Flatten()
        dead = resolved[ResolveEntriesBoundedFn.DEAD]
        if digests:
            dead = self._join_raws(dead, valid.pipeline)
        return answers, nodes, dead

    def _join_raws(self, refs, pipeline):
        """The registry's dead letters from their references (``ResolveEntriesBoundedFn`` with ``digests``):
        the digests they name (a side input: one per dead letter, and the members of a tie), the lines of a
        second read of the source whose digest is one of them (``raw_lines``), and each reference joined with
        its lines (``transforms.common.join_raw``). Only dead letters and their lines cross these steps; the
        records are never logged. No release reads anything here."""
        wanted = refs | "DeadLetterDigests" >> beam.FlatMap(_ref_digests)
        # how many lines are wanted: with none (clean input, the common case) the source is not read again
        needed = beam.pvalue.AsSingleton(wanted | "CountWanted" >> beam.combiners.Count.Globally())
        lines = read_again(self.raw_lines, pipeline, needed) | "DeadLetterLines" >> beam.ParDo(
            _MatchLinesFn(), beam.pvalue.AsList(wanted)
        )
        return refs | "JoinDeadLetterLines" >> beam.ParDo(_JoinRawFn(), beam.pvalue.AsDict(lines))

    def _expand_unbounded(self, valid):
        """Streaming: per-entry state and timers, merged per tick, applied by a
        stateful per-stream step as the watermark passes each tick."""
        resolved, merged, starts = self._resolve_unbounded(valid)
        inputs = with_input_end((merged, starts) | "Flatten" >> beam.Flatten(), self.spec)
        release = inputs | "ReleaseStream" >> beam.ParDo(
            per_stream_step(self._step(), self.tick_merge, valid.pipeline)
        ).with_input_types(tuple[str, typing.Any]).with_outputs(NODES, main="answers")
        return release.answers, release[NODES], resolved[ResolveEntriesFn.DEAD]

    def _resolve_bounded(self, valid, digests: bool = False):
        """Batch: each entry's updates resolved once (after a GroupByKey); outputs
        ``resolved`` (per stream, its tick aggregates), ``DEAD`` (dead letters, or with ``digests`` their
        references) and ``STREAMS_SEEN``."""
        return (
            valid
            | "GroupByEntry" >> beam.GroupByKey()
            | "ResolveEntries"
            >> beam.ParDo(
                ResolveEntriesBoundedFn(
                    self.spec,
                    self._domains,
                    self.mechanism.deletions_allowed,
                    self.config.max_mutations,
                    digests=digests,
                )
            ).with_outputs(ResolveEntriesBoundedFn.DEAD, ResolveEntriesBoundedFn.STREAMS_SEEN, main="resolved")
        )

    def _resolve_unbounded(self, valid):
        """Streaming: per-entry state and timers, tick aggregates merged per
        stream; returns ``(resolved, merged, starts)`` (``resolved`` carries the
        dead letters; ``starts``: one start marker per declared stream)."""
        spec = self.spec
        if self.registry_shards and not counts_gate(self.tick_merge, valid.pipeline):
            return self._resolve_sharded(valid)
        stateful_merge = stateful_tick_merge(self.tick_merge, valid.pipeline)
        resolved = valid | "ResolveEntries" >> beam.ParDo(
            ResolveEntriesFn(
                spec,
                self._domains,
                self.mechanism.deletions_allowed,
                per_stream=not stateful_merge,
                max_mutations=self.config.max_mutations,
                counts=counts_gate(self.tick_merge, valid.pipeline),
                upstream_counts=self._person_limit is not None and counts_gate(self.tick_merge, valid.pipeline),
            )
        ).with_input_types(tuple[tuple[str, str], typing.Any]).with_output_types(
            tuple[typing.Any, typing.Any]
        ).with_outputs(ResolveEntriesFn.DEAD, main="resolved")
        merged = resolved.resolved
        if stateful_merge:
            merged = merged | "MergePerTick" >> beam.ParDo(
                MergeTickFn(spec, counts_gate(self.tick_merge, valid.pipeline))
            ).with_input_types(tuple[tuple[str, int], typing.Any])
        return resolved, merged, self._starts(valid.pipeline)

    def _starts(self, pipeline):
        """One start marker per declared stream, at the origin."""
        return (
            pipeline
            | "DeclaredStreams" >> beam.Create([(s, START) for s in self.spec.streams], reshuffle=False)
            | "StampStart"
            >> beam.Map(lambda kv, t=self.spec.origin: window.TimestampedValue(kv, t)).with_output_types(
                tuple[str, typing.Any]
            )
        )

    def _resolve_sharded(self, valid):
        """``_resolve_unbounded`` with the registry in hash shards (``transforms.sharded``): the updates keyed by
        ``(stream, shard)``, resolved there, their aggregates summed per bundle and merged by the per-stream step
        (``tick_merge: stateful`` adds the per-tick merge)."""
        stateful_merge = self.tick_merge == "stateful"
        resolved = (
            valid
            | "KeyByShard" >> beam.ParDo(KeyByShard(self.registry_shards))
            | "ResolveShards"
            >> beam.ParDo(
                ResolveShardsFn(
                    self.spec,
                    self._domains,
                    self.mechanism.deletions_allowed,
                    per_stream=not stateful_merge,
                    max_mutations=self.config.max_mutations,
                    shards=self.registry_shards,
                )
            )
            .with_input_types(tuple[tuple[str, int], typing.Any])
            .with_outputs(ResolveShardsFn.DEAD, main="resolved")
        )
        merged = resolved.resolved
        if stateful_merge:
            merged = merged | "MergePerTick" >> beam.ParDo(MergeTickFn(self.spec)).with_input_types(
                tuple[tuple[str, int], typing.Any]
            )
        return resolved, merged, self._starts(valid.pipeline)


def _ref_digests(ref):
    """The digests a dead letter's reference names (its own; every member's in a tie)."""
    _, _, value, tie = ref
    values = (value,) if tie is None else tie[1]
    return [v[5] for v in values if v[5] is not None]


def read_again(raw_lines, pipeline, needed):
    """``raw_lines(pipeline, needed)``; a callable of one parameter (the form before the ``needed`` gate) is called
    as ``raw_lines(pipeline)``: it reads the source whatever the dead letters want, as it always did."""
    try:
        params = inspect.signature(raw_lines).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): the current form
        return raw_lines(pipeline, needed)
    positional = [q for q in params if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 2 or any(q.kind is q.VAR_POSITIONAL for q in params):
        return raw_lines(pipeline, needed)
    return raw_lines(pipeline)


class _MatchLinesFn(beam.DoFn):
    """The lines of the second read whose digest a dead letter names, as ``(digest, the text the parse step
    made of the line)``; its elements are chunks of lines (lists: ``raw_lines``). A line of bytes is hashed only
    if its length is one a wanted digest holds (``transforms.common.digest_length``). Lines only, never logged (a
    line that is not UTF-8 never became a record)."""

    def __init__(self):
        self._of = self._wanted = self._lengths = None

    def process(self, lines, wanted):
        if wanted is not self._of:  # the side input's list, made a set once per list
            self._of, self._wanted = wanted, frozenset(wanted)
            self._lengths = frozenset(map(digest_length, self._wanted))
        if not self._wanted:
            return
        found, length_wanted, longest = self._wanted.__contains__, self._lengths.__contains__, MAX_DIGEST_LENGTH
        for line in lines:
            # a bytes line of a length no digest wants is not hashed (nearly all: a few dead letters' lengths; a
            # line too long for its length to be in a digest always is)
            if type(line) is bytes and not length_wanted(len(line)) and len(line) < longest:
                continue
            d = line_digest(line)
            if found(d):
                try:
                    yield d, line if type(line) is str else line.decode("utf-8")
                except UnicodeDecodeError:
                    continue


class _JoinRawFn(beam.DoFn):
    """Each dead letter's reference joined with its record as received (``join_raw``); a record the second read
    did not find (the source changed between the reads) leaves as None, counted ``dead_letter_raw_missing``."""

    def process(self, ref, raws):
        dead, found = join_raw(ref, raws)
        if not found:
            Metrics.counter(NAMESPACE, "dead_letter_raw_missing").inc()
        yield dead


class ReleaseFullyDynamic(ReleaseContinually):
    """Qiu-Yi's fully-dynamic continual release of every declared stream
    (``ReleaseContinually("fully_dynamic", ...)``): ``answers`` at every
    segment close, ``nodes`` (the released tree) and ``dead_letters``.

    Privacy: ``config.budget`` per declared stream for ``config.unit``
    (update-level by default; see ``docs/fully_dynamic.md``)."""

    mechanism_name = "fully_dynamic"

    def __init__(self, config, spec=_DEFAULT_SPEC, noise_key=None, **kwargs):
        super().__init__(None, config, spec, noise_key, **kwargs)


class ReleaseInsertionOnly(ReleaseContinually):
    """The insertion-only release (000 Thm 8) of every declared stream; deletes and
    upserts are dead-lettered (``deletion_not_allowed``). Outputs as
    :class:`ReleaseFullyDynamic` (no node outputs)."""

    mechanism_name = "insertion_only"

    def __init__(self, config, spec=_DEFAULT_SPEC, noise_key=None, **kwargs):
        super().__init__(None, config, spec, noise_key, **kwargs)


class ReleaseTwoStreamBaseline(ReleaseContinually):
    """The two-stream baseline (000 §1.3) of every declared stream. Outputs as
    :class:`ReleaseFullyDynamic` (no node outputs)."""

    mechanism_name = "two_stream_baseline"

    def __init__(self, config, spec=_DEFAULT_SPEC, noise_key=None, **kwargs):
        super().__init__(None, config, spec, noise_key, **kwargs)


class CountContinually(ReleaseContinually):
    """A plain continual counter of inserted items per declared stream: every tick
    is one timestamp of ``counter`` (any of ``transforms.core.COUNTER_NAMES``;
    ``horizon`` in ticks for the finite ones), releasing an estimate at every
    tick, empty or not. Deletes and upserts are dead-lettered. Privacy:
    ``config.budget`` per stream, neighbours differ by one insert. Outputs as
    :class:`ReleaseFullyDynamic` (no node outputs)."""

    mechanism_name = "continual_count"

    def __init__(self, config, spec=_DEFAULT_SPEC, noise_key=None, *, counter="infinite_honaker", horizon=None, **kw):
        options = mechanisms.get("continual_count").options(counter=counter, horizon=horizon)
        super().__init__(None, config, spec, noise_key, options=options, emit_nodes=False, **kw)
