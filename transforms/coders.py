"""Coders of the record types the bounded graph types its PCollections with.

Beam's default coder for a value it has no type for (``FastPrimitivesCoder``) encodes a tuple's fields one by
one, but a tuple *subclass* (every ``NamedTuple``) goes to its fallback, ``pickle``:

* a :class:`~transforms.records.ReleaseRecord` takes 175 bytes and 4.5 us to encode and decode pickled (in a
  windowed value, as Beam's data plane carries it), by its fields 117 bytes and 2.3 us. The bounded graph
  (``ReleaseContinually._expand_bounded``) crosses a stage boundary with every record, so its answers are typed
  :class:`ReleaseRecordFields` there (a type hint only: the records are ``ReleaseRecord``) and encoded by
  :class:`ReleaseRecordCoder`: the fields as the tuple ``FastPrimitivesCoder`` encodes, rebuilt as a
  ``ReleaseRecord`` when decoded.
* a bounded run's parse step hands the release a chunk of updates as one element
  (:class:`~transforms.records.UpdateChunk`); it never crosses a stage boundary on the DirectRunner, but Beam
  estimates the encoded size of the first elements of every output it counts (``OperationCounters``: always the
  first 10, then ~10 ln 2 of each doubling), and pickled that is one ``pickle.dumps`` per record of a chunk (4,096):
  120,000 pickles in a run of 200,000 updates. :class:`UpdateChunkCoder` encodes the records' fields.

The same records out of both (``tests/test_release_coder.py``). Registered for the two hints when this module is
imported (``transforms.releases`` and ``pipelines.wiring`` import it). Only the bounded graph types a
PCollection with them (``ReleaseRecord`` itself, which the streaming graph's release steps declare, keeps Beam's
default coder): a streaming graph's coders are unchanged, so a running streaming job on Dataflow can still be
updated in place by this version (an update checks that each PCollection's coder is the one it had)."""

from __future__ import annotations

import pickle

import apache_beam as beam
from apache_beam.coders import coder_impl

from transforms.records import ReleaseRecord, UpdateChunk, UpdateRecord

__all__ = ["ReleaseRecordCoder", "ReleaseRecordFields", "UpdateChunkCoder"]


class _FieldsImpl(coder_impl.StreamCoderImpl):
    """A value as the plain fields ``FastPrimitivesCoder``'s own implementation encodes (tag 0), or, where that
    cannot encode them (a text that is not valid UTF-8, a lone surrogate: the parse step refuses ids and streams
    that hold one, so this is a guard), pickled as Beam's default coder would (tag 1): a coder never fails where the
    default one did not."""

    def __init__(self):
        self._fields = beam.coders.FastPrimitivesCoder().get_impl()

    def encode_to_stream(self, value, stream, nested):
        try:
            data, tag = self._fields.encode(self.fields(value)), _FIELDS
        except Exception:  # noqa: BLE001 - whatever the fields' encoding refuses, the default coder's pickle takes
            data, tag = pickle.dumps(value, pickle.HIGHEST_PROTOCOL), _PICKLED
        stream.write_byte(tag)
        stream.write(data, nested)

    def decode_from_stream(self, stream, nested):
        tag = stream.read_byte()
        data = stream.read_all(nested)
        return self.value(self._fields.decode(data)) if tag == _FIELDS else pickle.loads(data)


_FIELDS, _PICKLED = 0, 1


class _ReleaseRecordImpl(_FieldsImpl):
    fields = staticmethod(tuple)
    value = staticmethod(ReleaseRecord._make)


class _UpdateChunkImpl(_FieldsImpl):
    @staticmethod
    def fields(chunk):
        return [tuple(r) for r in chunk]

    @staticmethod
    def value(rows):
        make = UpdateRecord._make
        return UpdateChunk([make(t) for t in rows])

    def estimate_size(self, value, nested=False):
        """Exact for a chunk of at most ``_SAMPLE`` records; a larger one's from every k-th record's, scaled (Beam
        asks for a size only for a metric's mean, and encoding a whole sampled chunk of 4,096 was ~1% of a run)."""
        n = len(value)
        if n <= _SAMPLE:
            return super().estimate_size(value, nested)
        sample = value[:: n // _SAMPLE]
        return round(super().estimate_size(sample, nested) * n / len(sample))


_SAMPLE = 64


class ReleaseRecordFields(ReleaseRecord):
    """A type hint only, never made: a PCollection of :class:`~transforms.records.ReleaseRecord` that
    :class:`ReleaseRecordCoder` encodes (``ReleaseRecord`` itself keeps Beam's default coder: the streaming
    graph's release steps are typed with it, and their coders stay as they were)."""

    __slots__ = ()


class _FieldsCoder(beam.coders.Coder):
    """A coder of one of this module's types (no state: any two are equal). Not deterministic; where a step
    needs a deterministic coder (a record used as a grouping key: ``Distinct``, ``Count.PerElement``), the one
    Beam's default coder gives, as before these coders."""

    def is_deterministic(self) -> bool:
        return False

    def as_deterministic_coder(self, step_label, error_message=None):
        return beam.coders.FastPrimitivesCoder().as_deterministic_coder(step_label, error_message)

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))


class ReleaseRecordCoder(_FieldsCoder):
    """A :class:`~transforms.records.ReleaseRecord` as its fields (module docstring)."""

    def _create_impl(self):
        return _ReleaseRecordImpl()

    def to_type_hint(self):
        return ReleaseRecordFields


class UpdateChunkCoder(_FieldsCoder):
    """An :class:`~transforms.records.UpdateChunk` as its records' fields (module docstring)."""

    def _create_impl(self):
        return _UpdateChunkImpl()

    def to_type_hint(self):
        return UpdateChunk


beam.coders.registry.register_coder(ReleaseRecordFields, ReleaseRecordCoder)
beam.coders.registry.register_coder(UpdateChunk, UpdateChunkCoder)
