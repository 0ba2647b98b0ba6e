"""Typed records that cross the Beam transforms, and where the noise key comes from."""

from __future__ import annotations

import dataclasses
import os
import typing
from dataclasses import dataclass
from typing import NamedTuple

from transforms.core.foundation.accounting import as_vector
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.outputs import NodeOutput

__all__ = ["UpdateRecord", "UpdateChunk", "ReleaseRecord", "NodeRecord", "DeadLetter", "NoiseKey", "node_record"]


class UpdateRecord(NamedTuple):
    """One input update.

    event_time: seconds (event time); the element's Beam timestamp should be
      the same. ``item``: a tuple of domain indices, one per query set (the
      pipelines encode record fields into it). ``seq``: a tie-breaker that
      orders updates of one entry within a tick (e.g. a publish sequence).
      ``raw``: the input element as received (text, bytes, or a Pub/Sub
      ``(payload, attributes)`` pair), carried to the dead letters only (so a
      rejected update can be fixed and replayed); None when built directly.
      ``person``: the privacy id of the person the update belongs to (the
      person unit's ``privacy.person_field``; never released, never logged);
      None under the update and entry units.
    """

    event_time: float
    op: str
    entry_id: str
    item: tuple | None = None
    stream: str = "default"
    seq: int = 0
    raw: object = None
    person: str | None = None


class UpdateChunk(list):
    """A chunk of :class:`UpdateRecord` (a list): what a bounded run's parse step hands
    ``ReleaseContinually`` for a chunk of lines (``pipelines.io.lines``), each record validated as an element
    would be (``transforms.validate.ValidateFn`` with ``chunks``). A type of its own so that Beam encodes it with
    its own coder (``transforms.coders.UpdateChunkCoder``: the records' fields, not a pickle of each record)."""

    __slots__ = ()


class ReleaseRecord(NamedTuple):
    """One released answer (per query, per segment close)."""

    stream: str
    tick: int
    segment: int
    query: str
    estimate: tuple
    error_bound: float | None
    beta: float
    spent: tuple  # the ledger total so far, as (eps,), (eps, delta) or (rho,)
    as_of: str | None = None  # the event-time end of the released tick (RFC 3339)


# The wire form of a ``NodeOutput``: the same fields, with tuples of floats for
# the values and the cost (``as_vector``), so that records compare and encode
# without numpy. Built from NodeOutput's fields, so the two cannot drift apart.
NodeRecord = NamedTuple("NodeRecord", [(f.name, typing.Any) for f in dataclasses.fields(NodeOutput)])
NodeRecord.__doc__ = "A released piece of the DP data structure (see ``transforms.core.NodeOutput``)."


def node_record(n: NodeOutput) -> NodeRecord:
    """The record of a node output (values and cost as tuples of floats)."""
    wire = {
        "values": tuple(float(x) for x in n.values),
        "cost": None if n.cost is None else as_vector(n.cost),
        "coordinates": tuple(n.coordinates),
    }
    return NodeRecord(*(wire.get(f.name, getattr(n, f.name)) for f in dataclasses.fields(NodeOutput)))


class DeadLetter(NamedTuple):
    """A rejected update and why (the payload goes to the dead-letter output only;
    it is never logged).

    ``reason``: a key of ``transforms.core.foundation.entries.REASONS``; ``record``: the
    input as received (text, bytes, a Pub/Sub ``(payload, attributes)`` pair) or
    the :class:`UpdateRecord` (whose ``raw`` holds it); ``stage``: the step that
    rejected it (``parse``, ``validate``, ``registry``); ``stream``: the stream
    it named, if any."""

    reason: str
    record: object
    stage: str = ""
    stream: str | None = None


@dataclass(frozen=True)
class NoiseKey:
    """Where a worker gets the secret noise key (resolved in ``DoFn.setup``).

    * ``NoiseKey.from_env("VAR")``: hex key in an environment variable;
    * ``NoiseKey.from_file(path)``: hex key in a file (a mounted secret);
    * ``NoiseKey.from_secret_manager("projects/P/secrets/S/versions/latest")``:
      hex key in Google Secret Manager (Dataflow: the workers' service account
      needs secretmanager.versions.access);
    * ``NoiseKey.fixed(hex)``: a fixed key (tests only: it sits in the pipeline graph);
    * ``NoiseKey.disabled()``: noise switched off (tests only, no privacy).
    """

    kind: str
    value: str = ""

    def __post_init__(self):
        if self.kind not in ("env", "file", "secret", "fixed", "disabled"):
            raise ValueError("NoiseKey kind must be env, file, secret, fixed or disabled")

    @classmethod
    def from_env(cls, var: str) -> NoiseKey:
        return cls("env", var)

    @classmethod
    def from_file(cls, path: str) -> NoiseKey:
        return cls("file", path)

    @classmethod
    def from_secret_manager(cls, name: str) -> NoiseKey:
        if not name.startswith("projects/") or "/secrets/" not in name:
            raise ValueError("a Secret Manager key is named projects/PROJECT/secrets/NAME/versions/VERSION")
        return cls("secret", name)

    @classmethod
    def fixed(cls, hex_key: str) -> NoiseKey:
        return cls("fixed", hex_key)

    @classmethod
    def disabled(cls) -> NoiseKey:
        return cls("disabled")

    def load(self) -> NoiseSource:
        if self.kind == "disabled":
            return NoiseSource.disabled()
        if self.kind == "fixed":
            return NoiseSource.from_hex(self.value)
        if self.kind == "file":
            return NoiseSource.from_file(self.value)
        if self.kind == "secret":
            from google.cloud import secretmanager  # a dependency of the package (setup.py)

            payload = secretmanager.SecretManagerServiceClient().access_secret_version(name=self.value).payload
            return NoiseSource.from_hex(payload.data.decode("ascii"))
        text = os.environ.get(self.value)
        if not text:
            raise RuntimeError(f"the noise key variable {self.value} is not set on this worker")
        return NoiseSource.from_hex(text)

    def __repr__(self) -> str:  # never show a fixed key
        return f"NoiseKey({self.kind}{'' if self.kind in ('fixed', 'disabled') else ', ' + self.value})"
